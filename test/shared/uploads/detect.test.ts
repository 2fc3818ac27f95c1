import { describe, expect, it } from 'vitest';
import { checkedType, detectType } from '../../../shared/uploads/detect.js';
import { JPEG, PDF, PNG, TEXT } from '../../functions/upload/files.js';

describe('file type from the bytes', () => {
  it.each([
    [PNG, 'image/png'],
    [JPEG, 'image/jpeg'],
    [PDF, 'application/pdf'],
    [TEXT, undefined],
    [Buffer.from('GIF89a\u0001\u0000\u0001\u0000'), undefined],
  ])('detects %#', async (bytes, type) => {
    expect(await detectType(bytes)).toBe(type);
  });

  it('accepts a declared type that matches, or one that says nothing', async () => {
    expect(await checkedType(PNG, 'image/png', 'a.png')).toBe('image/png');
    expect(await checkedType(JPEG, 'image/jpg', 'a.jpg')).toBe('image/jpeg');
    expect(await checkedType(PDF, 'application/octet-stream', 'a')).toBe('application/pdf');
    expect(await checkedType(PDF, '', 'a')).toBe('application/pdf');
  });

  it('refuses bytes that disagree with their declared type, naming both', async () => {
    await expect(checkedType(PNG, 'application/pdf', 'a.pdf')).rejects.toMatchObject({ status: 400, code: 'FILE_TYPE_NOT_ALLOWED', message: expect.stringContaining('image/png') });
    await expect(checkedType(TEXT, 'image/png', 'a.png')).rejects.toMatchObject({ status: 400, code: 'FILE_TYPE_NOT_ALLOWED' });
  });
});
