/**
 * multipart/form-data parsed with busboy (@fastify/busboy, the maintained fork), in one pass over
 * the request body. The fork finds part boundaries with Buffer#indexOf (native code); busboy 1.x
 * scans every byte in JavaScript, and until that loop is optimised V8 allocates a heap number per
 * step (about one byte of garbage per byte of body). File data stays as the chunks the parser
 * emits (views into the body, not copies), so a file costs no second buffer.
 */
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { BadRequestError } from '../errors.js';
import { MAX_FILE_BYTES } from './limits.js';

export interface FilePart {
  field: string;
  /** The client's file name, as sent. */
  filename: string;
  /** The part's declared Content-Type. */
  declaredType: string;
  chunks: Buffer[];
  size: number;
  /** More than MAX_FILE_BYTES were sent; the rest was dropped. */
  truncated: boolean;
}

export interface ParsedMultipart {
  files: FilePart[];
  /** More file parts were sent than `maxFiles`. */
  tooManyFiles: boolean;
}

export interface ParseOptions {
  /** File parts kept; one more is counted as "too many". */
  maxFiles: number;
}

/** The first `n` bytes of a file (copied, only those, when they span chunks). */
export function headOf(file: FilePart, n: number): Buffer {
  const first = file.chunks[0];
  if (first && first.length >= n) return first.subarray(0, n);
  const parts: Buffer[] = [];
  let size = 0;
  for (const chunk of file.chunks) {
    if (size >= n) break;
    parts.push(chunk.subarray(0, n - size));
    size += parts[parts.length - 1].length;
  }
  return Buffer.concat(parts, size);
}

function malformed(): BadRequestError {
  return new BadRequestError('The multipart body is malformed', { body: 'malformed multipart/form-data' });
}

export function parseMultipart(contentType: string | undefined, body: Buffer | undefined, options: ParseOptions): Promise<ParsedMultipart> {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) {
    return Promise.reject(new BadRequestError('Content-Type must be multipart/form-data with a boundary', { 'Content-Type': 'must be multipart/form-data' }));
  }
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = Busboy({
        headers: { 'content-type': contentType },
        // One more than allowed, so that "too many" and "too large" can be told apart from "just enough".
        limits: { files: options.maxFiles + 1, fileSize: MAX_FILE_BYTES, fields: 50, fieldSize: 64 * 1024, parts: options.maxFiles + 51 },
        defCharset: 'utf8',
      });
    } catch {
      return reject(new BadRequestError('The multipart body has no boundary', { 'Content-Type': 'must carry a boundary' }));
    }
    const files: FilePart[] = [];
    let tooManyFiles = false;
    let settled = false;
    const fail = () => {
      if (!settled) reject(malformed());
      settled = true;
    };
    parser.on('file', (field, stream, filename, _encoding, mimeType) => {
      // A part cut short by the end of the body errors on its stream as well as on the parser.
      stream.on('error', fail);
      if (files.length >= options.maxFiles) {
        tooManyFiles = true;
        stream.resume();
        return;
      }
      const part: FilePart = { field, filename: filename ?? '', declaredType: mimeType ?? '', chunks: [], size: 0, truncated: false };
      files.push(part);
      stream.on('data', (chunk: Buffer) => {
        part.chunks.push(chunk);
        part.size += chunk.length;
      });
      stream.on('limit', () => (part.truncated = true));
    });
    parser.on('filesLimit', () => (tooManyFiles = true));
    parser.on('error', fail);
    parser.on('finish', () => {
      if (!settled) resolve({ files, tooManyFiles });
      settled = true;
    });
    parser.end(body ?? Buffer.alloc(0));
  });
}
