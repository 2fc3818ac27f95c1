/**
 * Uploads: files are private to their uploader (another user, even of the same tenant, gets
 * 404), stored in S3 under keys the server makes (`<tenant>/<id>/<safe filename>`), recorded in
 * the uploads table, and served through /api/v1/files/{id}, which redirects to a presigned GET
 * valid for a minute.
 */
import { randomUUID } from 'node:crypto';
import { logger } from '../logger.js';
import { BadRequestError, NotFoundError, PayloadTooLargeError, type ErrorCode } from '../errors.js';
import type { Pagination } from '../pagination.js';
import { checkedType, FileTypeNotAllowedError, SNIFF_BYTES } from './detect.js';
import { displayFilename, safeFilename } from './filename.js';
import {
  DOWNLOAD_TTL_SECONDS,
  isAllowedType,
  ALLOWED_TYPES,
  MAX_FILE_BYTES,
  MULTIPART_MAX_BYTES,
  PENDING_PREFIX,
  PRESIGN_TTL_SECONDS,
  type AllowedType,
} from './limits.js';
import { headOf, parseMultipart, type FilePart } from './multipart.js';
import { countOf, deletePending, deleteRecord, getPending, getRecord, listingSk, listRecords, putPending, putRecords, type Owner, type UploadRecord } from './records.js';
import { copyObject, deleteObject, headObject, presignGet, presignPost, putObject, readHead } from './storage.js';
import { fileUrl } from './url.js';
import type { CheckedBody } from '../route-types.js';
import type { uploadBodySchemas } from '../route-declarations/index.js';

export interface UploadResult {
  id: string;
  url: string;
  filename: string;
  size: number;
  type: AllowedType;
}

/** The uploader, and the base path its URLs keep. */
export type Caller = Owner & { basePath?: string };

const ID_PATTERN = /^upl_[0-9a-f]{32}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SAFE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

class UploadError extends BadRequestError {
  constructor(message: string, code: ErrorCode) {
    super(message, undefined, code);
  }
}

function newUploadId(): { id: string; uuid: string } {
  const uuid = randomUUID();
  return { uuid, id: `upl_${uuid.replace(/-/g, '')}` };
}

export function result(record: UploadRecord, caller: Caller): UploadResult {
  return { id: record.id, url: fileUrl(caller, record.id), filename: record.filename, size: record.size, type: record.type };
}

export function present(record: UploadRecord, caller: Caller): UploadRecord & { url: string } {
  return { ...record, url: fileUrl(caller, record.id) };
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) ? 1 : 0)} MiB`;
}

/** Checks one multipart file against the limits; returns its media type. */
async function checkFile(file: FilePart): Promise<AllowedType> {
  const name = displayFilename(file.filename);
  if (file.truncated || file.size > MAX_FILE_BYTES) throw new UploadError(`File too large: '${name}' is over ${mib(MAX_FILE_BYTES)}`, 'FILE_TOO_LARGE');
  if (file.size === 0) throw new UploadError(`The file '${name}' is empty`, 'EMPTY_FILE');
  return checkedType(headOf(file, SNIFF_BYTES), file.declaredType, name);
}

/**
 * POST /upload (one part `file`) and /upload/multiple (parts `files`, at most 10): every file is
 * parsed and checked before anything is stored; a failure part-way removes what was stored.
 */
export async function uploadMultipart(
  caller: Caller,
  request: { contentType?: string; body?: Buffer },
  options: { field: string; maxFiles: number },
): Promise<UploadResult[]> {
  if ((request.body?.length ?? 0) > MULTIPART_MAX_BYTES) {
    throw new PayloadTooLargeError(
      `The request is larger than a function accepts (${MULTIPART_MAX_BYTES} bytes of multipart body); upload files up to ${mib(MAX_FILE_BYTES)} with POST /api/v1/upload/presign`,
    );
  }
  const parsed = await parseMultipart(request.contentType, request.body, { maxFiles: options.maxFiles });
  if (parsed.tooManyFiles) throw new UploadError(`Too many files: at most ${options.maxFiles} in one request`, 'TOO_MANY_FILES');
  const others = parsed.files.filter((f) => f.field !== options.field);
  if (others.length) throw new UploadError(`Unexpected file part '${others[0].field}': send files in the part named '${options.field}'`, 'NO_FILE');
  if (!parsed.files.length) throw new UploadError(`No file given: send it in the multipart part named '${options.field}'`, 'NO_FILE');

  const types: AllowedType[] = [];
  for (const file of parsed.files) types.push(await checkFile(file));

  const createdAt = new Date().toISOString();
  const records: UploadRecord[] = parsed.files.map((file, i) => {
    const { id, uuid } = newUploadId();
    const filename = displayFilename(file.filename);
    return { id, key: `${caller.tenantId}/${uuid}/${safeFilename(file.filename)}`, filename, size: file.size, type: types[i], ownerId: caller.ownerId, tenantId: caller.tenantId, createdAt };
  });
  const stored: string[] = [];
  try {
    for (const [i, file] of parsed.files.entries()) {
      await putObject(records[i].key, file.chunks, file.size, records[i].type, records[i].filename);
      stored.push(records[i].key);
    }
    await putRecords(records);
  } catch (error) {
    await removeObjects(stored);
    throw error;
  }
  return records.map((record) => result(record, caller));
}

async function removeObjects(keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    await deleteObject(key).catch((error: unknown) => logger.error('could not remove an object after a failed upload', { key, error: error as Error }));
  }
}

/** A presign body, as its route declares it (shared/route-declarations/upload.ts; the stack has checked it). */
export type PresignInput = CheckedBody<typeof uploadBodySchemas.presign>;
/** A complete body, as its route declares it (shared/route-declarations/upload.ts; the stack has checked it). */
export type CompleteInput = CheckedBody<typeof uploadBodySchemas.complete>;

export interface PresignResult {
  url: string;
  fields: Record<string, string>;
  key: string;
  expiresAt: string;
}

/** POST /upload/presign {filename, type, size}: a presigned POST to a pending key of the caller's. */
export async function presign(caller: Caller, input: PresignInput): Promise<PresignResult> {
  const type = input.type.toLowerCase();
  if (!isAllowedType(type)) throw new UploadError(`File type not allowed: ${type}; allowed are ${ALLOWED_TYPES.join(', ')}`, 'FILE_TYPE_NOT_ALLOWED');
  const size = input.size;
  if (size > MAX_FILE_BYTES) throw new UploadError(`File too large: ${size} bytes is over ${mib(MAX_FILE_BYTES)}`, 'FILE_TOO_LARGE');

  const filename = displayFilename(input.filename);
  const uuid = randomUUID();
  const key = `${PENDING_PREFIX}${caller.tenantId}/${caller.ownerId}/${uuid}/${safeFilename(filename)}`;
  const expiresAt = Math.floor(Date.now() / 1000) + PRESIGN_TTL_SECONDS;
  const post = await presignPost(key, type, size, PRESIGN_TTL_SECONDS);
  // What was signed is kept, so that completing checks the object against it even where the
  // store does not enforce the policy (s3rver).
  await putPending({ uuid, key, filename, type, size, ownerId: caller.ownerId, tenantId: caller.tenantId, expiresAt });
  return { url: post.url, fields: post.fields, key, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

/** The uuid of a pending key when it is the caller's in form, else undefined. */
export function pendingUuidOf(caller: Caller, key: unknown): string | undefined {
  if (typeof key !== 'string' || !key.startsWith(PENDING_PREFIX)) return undefined;
  const parts = key.slice(PENDING_PREFIX.length).split('/');
  if (parts.length !== 4) return undefined;
  const [tenantId, ownerId, uuid, safeName] = parts;
  if (tenantId !== caller.tenantId || ownerId !== caller.ownerId) return undefined;
  if (!UUID_PATTERN.test(uuid) || !SAFE_NAME_PATTERN.test(safeName)) return undefined;
  return uuid;
}

/**
 * POST /upload/complete {key}: the object the client POSTed is checked against what was signed
 * (size from HeadObject, type from its first bytes), because a store may not have enforced the
 * policy; a bad one is deleted and answers 400, a good one moves to its final key and is recorded.
 */
export async function complete(caller: Caller, body: CompleteInput): Promise<UploadResult> {
  const uuid = pendingUuidOf(caller, body.key);
  const pending = uuid ? await getPending(uuid) : undefined;
  if (!pending || pending.key !== body.key || pending.ownerId !== caller.ownerId || pending.tenantId !== caller.tenantId) {
    throw new NotFoundError('No pending upload with this key (unknown, expired or already completed)');
  }
  const head = await headObject(pending.key);
  if (!head) throw new NotFoundError('Nothing was uploaded with this key yet');

  let type: AllowedType;
  try {
    if (head.size === 0) throw new UploadError(`The file '${pending.filename}' is empty`, 'EMPTY_FILE');
    if (head.size > pending.size) {
      throw new UploadError(`File too large: '${pending.filename}' has ${head.size} bytes, ${pending.size} were presigned (at most ${mib(MAX_FILE_BYTES)})`, 'FILE_TOO_LARGE');
    }
    type = await checkedType(await readHead(pending.key, Math.min(SNIFF_BYTES, head.size)), head.type, pending.filename);
    if (type !== pending.type) throw new FileTypeNotAllowedError(`File type not allowed: '${pending.filename}' is ${type}, ${pending.type} was presigned`);
  } catch (error) {
    if (error instanceof BadRequestError) {
      await deleteObject(pending.key);
      await deletePending(pending.uuid);
    }
    throw error;
  }

  const record: UploadRecord = {
    id: `upl_${pending.uuid.replace(/-/g, '')}`,
    key: `${caller.tenantId}/${pending.uuid}/${pending.key.split('/').pop()}`,
    filename: pending.filename,
    size: head.size,
    type,
    ownerId: caller.ownerId,
    tenantId: caller.tenantId,
    createdAt: new Date().toISOString(),
  };
  await copyObject(pending.key, record.key, type, record.filename);
  try {
    await putRecords([record], pending);
  } catch (error) {
    await removeObjects([record.key]);
    if ((error as { name?: string }).name === 'TransactionCanceledException') throw new NotFoundError('No pending upload with this key (already completed)');
    throw error;
  }
  await deleteObject(pending.key).catch((error: unknown) => logger.warn('pending object left to the lifecycle rule', { key: pending.key, error: error as Error }));
  return result(record, caller);
}

/** The caller's own record, or 404 (another user's or tenant's file is not revealed). */
export async function ownRecord(caller: Caller, id: string | undefined): Promise<UploadRecord> {
  if (!id || !ID_PATTERN.test(id)) throw new NotFoundError('File not found');
  const record = await getRecord(id);
  if (!record || record.tenantId !== caller.tenantId || record.ownerId !== caller.ownerId) throw new NotFoundError('File not found');
  return record;
}

/** A Content-Disposition that never carries more than the safe name (plus the real one, encoded). */
export function dispositionOf(record: UploadRecord): string {
  const kind = record.type === 'application/pdf' ? 'attachment' : 'inline';
  const safe = record.key.split('/').pop()!;
  return `${kind}; filename="${safe}"; filename*=UTF-8''${encodeURIComponent(record.filename)}`;
}

/** GET /files/{id}: a presigned GET of the caller's own file, valid for a minute. */
export async function downloadUrl(caller: Caller, id: string | undefined): Promise<string> {
  const record = await ownRecord(caller, id);
  return presignGet(record.key, record.type, dispositionOf(record), DOWNLOAD_TTL_SECONDS);
}

/** DELETE /uploads/{id}: the object first (a retry after a failure finds the record and ends the job). */
export async function remove(caller: Caller, id: string | undefined): Promise<void> {
  const record = await ownRecord(caller, id);
  await deleteObject(record.key);
  await deleteRecord(record);
}

const CURSOR_SK = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z#upl_[0-9a-f]{32}$/;

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new BadRequestError(`${name} must be a positive integer`, { [name]: 'must be a positive integer' });
  return Number(value);
}

function encodeCursor(sk: string, page: number): string {
  return Buffer.from(JSON.stringify({ s: sk, p: page })).toString('base64url');
}

function decodeCursor(cursor: string): { sk: string; page: number } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: unknown; p?: unknown };
    if (typeof value.s === 'string' && CURSOR_SK.test(value.s) && Number.isInteger(value.p) && (value.p as number) >= 1) return { sk: value.s, page: value.p as number };
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError('The cursor is not valid', { cursor: 'use pagination.nextCursor as given' });
}

/** GET /uploads: the caller's uploads, newest first; page/limit (default 20, at most 100) or cursor. */
export async function list(caller: Caller, query: Record<string, string>): Promise<{ data: Array<UploadRecord & { url: string }>; pagination: Pagination }> {
  const limit = Math.min(100, positiveInt(query.limit, 'limit', 20));
  let page = positiveInt(query.page, 'page', 1);
  let position: { afterSk?: string; skip?: number };
  if (query.cursor) {
    const cursor = decodeCursor(query.cursor);
    page = cursor.page;
    position = { afterSk: cursor.sk };
  } else {
    position = { skip: (page - 1) * limit };
  }
  const [total, records] = await Promise.all([countOf(caller), listRecords(caller, limit, position)]);
  const totalPages = Math.max(1, Math.ceil(total / limit));
  const hasNext = page * limit < total && records.length === limit;
  return {
    data: records.map((record) => present(record, caller)),
    pagination: {
      page,
      limit,
      total,
      totalPages,
      hasNext,
      hasPrev: page > 1,
      nextCursor: hasNext ? encodeCursor(listingSk(records[records.length - 1]), page + 1) : null,
    },
  };
}
