import { describe, expect, it } from 'vitest';
import { idTime, timePrefix } from '../../shared/record-ids.js';
import { newRecordId } from '../../shared/ids.js';

const prefixed = { type: 'prefixed' as const, prefix: 'tsk' };
const uuid = { type: 'uuid' as const };
const at = Date.parse('2026-11-23T04:00:00.123Z');

describe('record ids', () => {
  it('a prefixed id is the prefix, 8 characters of time and 14 random ones, and gives its time back', () => {
    const id = newRecordId(prefixed, at);

    expect(id).toMatch(/^tsk_[0-9A-Za-z]{22}$/);
    expect(idTime(prefixed, id)).toBe(at);
    expect(newRecordId(prefixed, at)).not.toBe(id);
  });

  it('a UUID id is a UUIDv7 that gives its time back', () => {
    const id = newRecordId(uuid, at);

    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idTime(uuid, id)).toBe(at);
  });

  it('time characters sort as the times they encode', () => {
    const times = [0, 61, 62, 1_000_000, at, at + 1, 9_999_999_999_999];
    const encoded = times.map(timePrefix);

    expect([...encoded].sort()).toEqual(encoded);
    expect(encoded.every((t) => t.length === 8)).toBe(true);
  });

  it('ids of earlier versions and import-derived ids carry no time', () => {
    expect(idTime(prefixed, 'tsk_0123456789ABCDEFGHij')).toBeUndefined(); // 20 characters
    expect(idTime(prefixed, 'usr_0000000000000000000000')).toBeUndefined(); // another prefix
    expect(idTime(prefixed, 'tsk_00000000000000000000-_')).toBeUndefined();
    expect(idTime(uuid, '1b4e28ba-2fa1-41d2-883f-0016d3cca427')).toBeUndefined(); // v4
    expect(idTime(uuid, '1b4e28ba-2fa1-51d2-883f-0016d3cca427')).toBeUndefined(); // v5
    expect(idTime(uuid, newRecordId(uuid, at).toUpperCase())).toBeUndefined();
  });

  it('a time past what a listing sort key holds is no time', () => {
    expect(idTime(prefixed, 'tsk_zzzzzzzz00000000000000')).toBeUndefined();
    expect(idTime(uuid, 'ffffffff-ffff-7fff-bfff-ffffffffffff')).toBeUndefined();
  });
});
