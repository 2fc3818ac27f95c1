import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { parseMultipart } from '../../../shared/uploads/multipart.js';
import { uploadMultipart } from '../../../shared/uploads/service.js';
import { oneBuffer, putObject, resetS3Client, s3 } from '../../../shared/uploads/storage.js';
import { multipart, PDF } from '../../functions/upload/files.js';

/** What the S3 server is sent, attempt by attempt: the first attempt's connection is reset. */
function resetFirstAttempt() {
  const bodies: unknown[] = [];
  const handle = vi.spyOn(s3().config.requestHandler as { handle: (...args: any[]) => Promise<unknown> }, 'handle');
  handle.mockImplementation(async (request: { body: unknown }) => {
    bodies.push(request.body);
    if (bodies.length === 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' });
    return { response: { statusCode: 200, headers: { etag: '"e"' }, body: Readable.from([]) } };
  });
  return { bodies, handle };
}

beforeAll(() => {
  // Never contacted: the request handler answers.
  process.env.S3_ENDPOINT = 'http://127.0.0.1:9';
  resetConfig();
});

afterEach(() => {
  vi.restoreAllMocks();
  resetS3Client();
});

afterAll(() => {
  delete process.env.S3_ENDPOINT;
  resetConfig();
});

describe('putObject', () => {
  it('sends the whole file again when the connection is reset', async () => {
    const { bodies, handle } = resetFirstAttempt();

    await putObject('ten_a/u/scan.pdf', [PDF.subarray(0, 10), PDF.subarray(10)], PDF.length, 'application/pdf', 'scan.pdf');

    expect(handle).toHaveBeenCalledTimes(2);
    expect(bodies.map((body) => Buffer.isBuffer(body) && body.equals(PDF))).toEqual([true, true]);
  });
});

describe('uploadMultipart', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  afterAll(() => dynamo.restore());

  it('stores the file and answers its record when the first PutObject is reset', async () => {
    dynamo.on(TransactWriteCommand).resolves({});
    const { bodies } = resetFirstAttempt();
    const { body, contentType } = multipart([{ name: 'file', filename: 'scan.pdf', type: 'application/pdf', data: PDF }]);

    const [stored] = await uploadMultipart({ tenantId: 'ten_a', ownerId: 'usr_a' }, { contentType, body }, { field: 'file', maxFiles: 1 });

    expect(stored).toMatchObject({ filename: 'scan.pdf', size: PDF.length, type: 'application/pdf' });
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual(PDF);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});

describe('oneBuffer', () => {
  it("makes the parser's chunks one view of the request body, without a copy", async () => {
    const data = Buffer.alloc(300_000, 7);
    const { body, contentType } = multipart([{ name: 'file', filename: 'a.bin', data }]);
    const [file] = (await parseMultipart(contentType, body, { maxFiles: 1 })).files;

    const joined = oneBuffer(file.chunks);

    expect(joined.equals(data)).toBe(true);
    expect(joined.buffer).toBe(body.buffer);
  });

  it('joins chunks that are not adjacent', () => {
    const a = Buffer.from('abc');
    const b = Buffer.from('def');

    expect(oneBuffer([a, b]).toString()).toBe('abcdef');
    expect(oneBuffer([]).length).toBe(0);
  });
});
