import { describe, expect, it } from 'vitest';
import { createRecordsInput, deleteRecordInput, listingQueryInput, ownerPartition, type PendingUpload, type UploadRecord } from '../../../shared/uploads/records.js';
import { pendingUuidOf } from '../../../shared/uploads/service.js';

const record: UploadRecord = {
  id: 'upl_0123456789abcdef0123456789abcdef',
  key: 'ten_a/01234567-89ab-cdef-0123-456789abcdef/a.png',
  filename: 'a.png',
  size: 10,
  type: 'image/png',
  ownerId: 'usr_a',
  tenantId: 'ten_a',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('upload record parameters', () => {
  it('writes the records, their listing copies and one counter change in one transaction', () => {
    const second = { ...record, id: 'upl_ffffffffffffffffffffffffffffffff' };
    const items = createRecordsInput([record, second]).TransactItems!;
    expect(items).toHaveLength(5);
    expect(items[0].Put).toMatchObject({ Item: { pk: `UPLOAD#${record.id}`, sk: 'UPLOAD' }, ConditionExpression: 'attribute_not_exists(pk)' });
    expect(items[2].Put!.Item).toMatchObject({ pk: 'OWNER#ten_a#usr_a', sk: `2026-01-01T00:00:00.000Z#${record.id}` });
    expect(items[4].Update).toMatchObject({ Key: { pk: 'OWNER#ten_a#usr_a', sk: '#count' }, ExpressionAttributeValues: { ':n': 2 } });
  });

  it('consumes the pending upload in the same transaction when completing', () => {
    const pending = { uuid: '01234567-89ab-cdef-0123-456789abcdef', ownerId: 'usr_a', tenantId: 'ten_a' } as PendingUpload;
    const first = createRecordsInput([record], pending).TransactItems![0];
    expect(first.Delete).toMatchObject({ Key: { pk: `PENDING#${pending.uuid}`, sk: 'PENDING' }, ConditionExpression: expect.stringContaining('attribute_exists(pk)') });
  });

  it("deletes only while the record is still the owner's, and counts down", () => {
    const items = deleteRecordInput(record).TransactItems!;
    expect(items[0].Delete).toMatchObject({ ExpressionAttributeValues: { ':owner': 'usr_a', ':tenant': 'ten_a' } });
    expect(items[2].Update!.ExpressionAttributeValues).toEqual({ ':n': -1 });
  });

  it("lists newest first from the owner's partition only, after the counter", () => {
    const input = listingQueryInput({ tenantId: 'ten_a', ownerId: 'usr_a' }, 20, 'x');
    expect(input).toMatchObject({ ScanIndexForward: false, Limit: 20, ExclusiveStartKey: { pk: ownerPartition(record), sk: 'x' } });
    expect(input.ExpressionAttributeValues).toEqual({ ':pk': 'OWNER#ten_a#usr_a', ':count': '#count' });
  });
});

describe('pending keys', () => {
  const caller = { tenantId: 'ten_a', ownerId: 'usr_a' };
  const uuid = '01234567-89ab-cdef-0123-456789abcdef';

  it("accepts the caller's own key in the form the server makes", () => {
    expect(pendingUuidOf(caller, `pending/ten_a/usr_a/${uuid}/a.png`)).toBe(uuid);
  });

  it.each([
    `pending/ten_b/usr_a/${uuid}/a.png`,
    `pending/ten_a/usr_b/${uuid}/a.png`,
    `pending/ten_a/usr_a/${uuid}/../a.png`,
    `pending/ten_a/usr_a/${uuid}/..`,
    `pending/ten_a/usr_a/../${uuid}/a.png`,
    `ten_a/${uuid}/a.png`,
    `pending/ten_a/usr_a/not-a-uuid/a.png`,
    42,
  ])('refuses %j', (key) => {
    expect(pendingUuidOf(caller, key)).toBeUndefined();
  });
});
