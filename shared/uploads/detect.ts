/**
 * The media type of a file is judged from its first bytes (file-type), never from its name or
 * declared type alone: a file whose bytes are not an allowed type, or disagree with the type it
 * was declared as, is refused.
 */
import { fileTypeFromBuffer } from 'file-type';
import { BadRequestError } from '../errors.js';
import { ALLOWED_TYPES, isAllowedType, type AllowedType } from './limits.js';

/** Enough bytes for every allowed type's signature. */
export const SNIFF_BYTES = 4100;

/** Declared types that say nothing about the content (curl's default for unknown extensions). */
const UNSPECIFIED = new Set(['', 'application/octet-stream']);

export class FileTypeNotAllowedError extends BadRequestError {
  constructor(message: string) {
    super(message, undefined, 'FILE_TYPE_NOT_ALLOWED');
  }
}

/** The allowed media type of these first bytes, or undefined. */
export async function detectType(head: Uint8Array): Promise<AllowedType | undefined> {
  const found = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES));
  return found && isAllowedType(found.mime) ? found.mime : undefined;
}

function normalise(declared: string | undefined): string {
  const type = (declared ?? '').split(';')[0].trim().toLowerCase();
  return type === 'image/jpg' || type === 'image/pjpeg' ? 'image/jpeg' : type;
}

/** The file's media type, or a 400 FILE_TYPE_NOT_ALLOWED naming the file. */
export async function checkedType(head: Uint8Array, declared: string | undefined, filename: string): Promise<AllowedType> {
  const detected = await detectType(head);
  if (!detected) {
    throw new FileTypeNotAllowedError(`File type not allowed: '${filename}' is not ${ALLOWED_TYPES.join(', ')} (judged from its content)`);
  }
  const stated = normalise(declared);
  if (!UNSPECIFIED.has(stated) && stated !== detected) {
    throw new FileTypeNotAllowedError(`File type not allowed: '${filename}' was declared as ${stated} but its content is ${detected}`);
  }
  return detected;
}
