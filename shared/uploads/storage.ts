/**
 * The object store: one S3 client per container. S3_ENDPOINT (or AWS_ENDPOINT_URL_S3) points at
 * an S3-compatible server (s3rver under `npm start`), addressed path-style. Checksums are sent only
 * where S3 requires them (no aws-chunked framing, which s3rver would store as part of the object).
 * Bodies are buffers, never streams: the SDK retries a transient failure (a reset connection, a
 * 5xx) by sending the request again, which it cannot do with a stream it has already read.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../config.js';

let client: S3Client | undefined;

/** Credentials s3rver accepts; only used with a local endpoint. */
const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export function s3(): S3Client {
  if (!client) {
    const { region, uploads } = config();
    client = new S3Client({
      region,
      maxAttempts: 3,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(uploads.s3Endpoint ? { endpoint: uploads.s3Endpoint, forcePathStyle: true, credentials: LOCAL_CREDENTIALS } : {}),
    });
  }
  return client;
}

/** For tests and the local runtime, after the endpoint changed. */
export function resetS3Client(): void {
  client?.destroy();
  client = undefined;
}

function bucket(): string {
  return config().uploads.bucket;
}

/**
 * Stores a file given as chunks. The body is one buffer, so that the SDK can send it again after
 * a transient failure (a stream body fails the request at the first reset).
 */
export async function putObject(key: string, chunks: readonly Buffer[], size: number, type: string, filename: string): Promise<void> {
  await s3().send(
    new PutObjectCommand({
      Bucket: bucket(),
      Key: key,
      Body: oneBuffer(chunks),
      ContentLength: size,
      ContentType: type,
      Metadata: { filename: encodeURIComponent(filename) },
    }),
  );
}

/**
 * The chunks as one buffer. The multipart parser's chunks are views into the request body, one
 * after the other: they are then one view of that body, with no copy; otherwise they are joined
 * (a file is at most MAX_FILE_BYTES).
 */
export function oneBuffer(chunks: readonly Buffer[]): Buffer {
  if (chunks.length === 1) return chunks[0];
  if (chunks.length === 0) return Buffer.alloc(0);
  const { buffer, byteOffset } = chunks[0];
  let end = byteOffset;
  for (const chunk of chunks) {
    if (chunk.buffer !== buffer || chunk.byteOffset !== end) return Buffer.concat(chunks);
    end += chunk.length;
  }
  return Buffer.from(buffer, byteOffset, end - byteOffset);
}

export async function headObject(key: string): Promise<{ size: number; type?: string } | undefined> {
  try {
    const head = await s3().send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
    return { size: head.ContentLength ?? 0, type: head.ContentType };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** The first `n` bytes of an object (a ranged GET). */
export async function readHead(key: string, n: number): Promise<Uint8Array> {
  const object = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key, Range: `bytes=0-${n - 1}` }));
  const bytes = await object.Body!.transformToByteArray();
  return bytes.subarray(0, n);
}

export async function copyObject(from: string, to: string, type: string, filename: string): Promise<void> {
  await s3().send(
    new CopyObjectCommand({
      Bucket: bucket(),
      Key: to,
      CopySource: `${bucket()}/${from.split('/').map(encodeURIComponent).join('/')}`,
      MetadataDirective: 'REPLACE',
      ContentType: type,
      Metadata: { filename: encodeURIComponent(filename) },
    }),
  );
}

export async function deleteObject(key: string): Promise<void> {
  await s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: key }));
}

export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

/** A browser-ready POST whose policy fixes the key, the Content-Type and the size range (1 byte to `maxSize`). */
export async function presignPost(key: string, type: string, maxSize: number, expiresIn: number): Promise<PresignedPost> {
  return createPresignedPost(s3(), {
    Bucket: bucket(),
    Key: key,
    Fields: { 'Content-Type': type },
    // Every field (the Content-Type here, key and bucket) becomes an exact-match condition.
    Conditions: [['content-length-range', 1, maxSize]],
    Expires: expiresIn,
  });
}

/** A short-lived GET that answers with the given type and disposition. */
export async function presignGet(key: string, type: string, disposition: string, expiresIn: number): Promise<string> {
  return getSignedUrl(
    s3(),
    new GetObjectCommand({ Bucket: bucket(), Key: key, ResponseContentType: type, ResponseContentDisposition: disposition }),
    { expiresIn },
  );
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}
