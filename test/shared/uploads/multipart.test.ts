import { describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../../../shared/uploads/limits.js';
import { headOf, parseMultipart } from '../../../shared/uploads/multipart.js';

const BOUNDARY = '----unit7f3a';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

type Part = { name: string; filename?: string; type?: string; data: Buffer | string };

function form(parts: Part[], { close = true } = {}): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const head = `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`;
    pieces.push(Buffer.from(head), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  if (close) pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

describe('multipart parsing', () => {
  it('keeps a file as views into the request body, its bytes, name and declared type intact', async () => {
    const bytes = Buffer.alloc(256 * 1024, 0xab);
    const body = form([{ name: 'file', filename: 'photo.png', type: 'image/png', data: bytes }]);

    const { files, tooManyFiles } = await parseMultipart(CONTENT_TYPE, body, { maxFiles: 1 });

    expect(tooManyFiles).toBe(false);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ field: 'file', filename: 'photo.png', declaredType: 'image/png', size: bytes.length, truncated: false });
    expect(Buffer.concat(files[0].chunks).equals(bytes)).toBe(true);
    // No copy of the file: every chunk shares the body's memory.
    expect(files[0].chunks.every((chunk) => chunk.buffer === body.buffer)).toBe(true);
  });

  it('decodes a UTF-8 file name', async () => {
    const body = form([{ name: 'file', filename: 'résumé €.pdf', type: 'application/pdf', data: '%PDF-1.4' }]);
    const { files } = await parseMultipart(CONTENT_TYPE, body, { maxFiles: 1 });
    expect(files[0].filename).toBe('résumé €.pdf');
  });

  it('keeps several files in order and ignores plain fields', async () => {
    const body = form([
      { name: 'note', data: 'hello' },
      { name: 'files', filename: 'a.png', type: 'image/png', data: 'aaa' },
      { name: 'files', filename: 'b.pdf', type: 'application/pdf', data: 'bbbb' },
    ]);
    const { files } = await parseMultipart(CONTENT_TYPE, body, { maxFiles: 10 });
    expect(files.map((f) => [f.field, f.filename, f.size])).toEqual([
      ['files', 'a.png', 3],
      ['files', 'b.pdf', 4],
    ]);
  });

  it('says when more files were sent than allowed', async () => {
    const body = form([1, 2, 3].map((i) => ({ name: 'files', filename: `${i}.png`, type: 'image/png', data: 'x' })));
    const parsed = await parseMultipart(CONTENT_TYPE, body, { maxFiles: 2 });
    expect(parsed.tooManyFiles).toBe(true);
    expect(parsed.files).toHaveLength(2);
  });

  it('marks a file over the size limit as truncated, keeping no more than the limit', async () => {
    const body = form([{ name: 'file', filename: 'big.pdf', type: 'application/pdf', data: Buffer.alloc(MAX_FILE_BYTES + 10) }]);
    const { files } = await parseMultipart(CONTENT_TYPE, body, { maxFiles: 1 });
    expect(files[0].truncated).toBe(true);
    expect(files[0].size).toBe(MAX_FILE_BYTES);
  });

  it('reports an empty file part with size 0', async () => {
    const { files } = await parseMultipart(CONTENT_TYPE, form([{ name: 'file', filename: 'empty.png', type: 'image/png', data: '' }]), { maxFiles: 1 });
    expect(files[0]).toMatchObject({ size: 0, chunks: [] });
  });

  it('answers 400 for a body cut short, a missing boundary or another content type', async () => {
    const cut = form([{ name: 'file', filename: 'a.png', type: 'image/png', data: 'abc' }], { close: false }).subarray(0, -2);
    await expect(parseMultipart(CONTENT_TYPE, cut, { maxFiles: 1 })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('malformed') });
    await expect(parseMultipart('multipart/form-data; charset=utf-8', form([]), { maxFiles: 1 })).rejects.toMatchObject({ status: 400 });
    await expect(parseMultipart('application/json', Buffer.from('{}'), { maxFiles: 1 })).rejects.toMatchObject({ status: 400 });
    await expect(parseMultipart(undefined, undefined, { maxFiles: 1 })).rejects.toMatchObject({ status: 400 });
  });

  it('finds no file in an empty or file-less body', async () => {
    expect((await parseMultipart(CONTENT_TYPE, form([{ name: 'note', data: 'x' }]), { maxFiles: 1 })).files).toEqual([]);
  });
});

describe('the first bytes of a file', () => {
  it('are a view when the first chunk holds them, else a copy of only those bytes', () => {
    const one = Buffer.from('0123456789');
    const file = { field: 'f', filename: 'a', declaredType: '', chunks: [one.subarray(0, 4), one.subarray(4)], size: 10, truncated: false };
    expect(headOf({ ...file, chunks: [one] }, 4).buffer).toBe(one.buffer);
    expect(headOf(file, 6).toString()).toBe('012345');
    expect(headOf(file, 50).toString()).toBe('0123456789');
  });
});
