/**
 * The upload family's routes: multipart within the Lambda limit, presigned POST up to 10 MiB,
 * files private to their uploader. The presigned flow's bodies are checked by the middleware
 * stack; the service takes its input types from them, and checks what a schema cannot say (the
 * type is allowed, the size within the limit).
 */
import type { RouteDocs } from '../route-types.js';
import type { ErrorCode } from '../errors.js';
import { BODY, STRING, V1, familyRoutes } from './declare.js';

export const uploadBodySchemas = {
  presign: {
    type: 'object',
    required: ['filename', 'type', 'size'],
    properties: { filename: { type: 'string', minLength: 1, maxLength: 1024, pattern: '\\S' }, type: { type: 'string', minLength: 1 }, size: { type: 'integer', minimum: 1 } },
  },
  complete: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, description: 'The key /api/v1/upload/presign returned.' } } },
} as const;

const MULTIPART: readonly ErrorCode[] = ['INVALID_REQUEST', 'NO_FILE', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'TOO_MANY_FILES', 'FILE_TYPE_NOT_ALLOWED'];
const FILE = { type: 'string', contentMediaType: 'application/octet-stream' } as const;

export const uploadRoutes = /* @__PURE__ */ familyRoutes('upload', [
  {
    method: 'POST',
    path: `${V1}/upload`,
    operation: 'uploadFile',
    auth: 'required',
    scope: 'uploads:write',
    rawBody: true,
    errors: [...MULTIPART],
    summary: 'Upload a file',
    response: 'UploadResult',
  },
  {
    method: 'POST',
    path: `${V1}/upload/multiple`,
    operation: 'uploadFiles',
    auth: 'required',
    scope: 'uploads:write',
    rawBody: true,
    errors: [...MULTIPART],
    summary: 'Upload up to 10 files',
  },
  {
    method: 'POST',
    path: `${V1}/upload/presign`,
    operation: 'presignUpload',
    auth: 'required',
    scope: 'uploads:write',
    errors: [...BODY, 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'],
    summary: 'Presigned POST for a file up to 10 MiB',
    body: uploadBodySchemas.presign,
  },
  {
    method: 'POST',
    path: `${V1}/upload/complete`,
    operation: 'completeUpload',
    auth: 'required',
    scope: 'uploads:write',
    errors: [...BODY, 'NOT_FOUND', 'EMPTY_FILE', 'FILE_TOO_LARGE', 'FILE_TYPE_NOT_ALLOWED'],
    summary: 'Check a presigned upload',
    body: uploadBodySchemas.complete,
    response: 'UploadResult',
  },
  { method: 'GET', path: `${V1}/uploads`, operation: 'listUploads', auth: 'required', scope: 'uploads:read', errors: ['INVALID_REQUEST'], summary: "The caller's uploads" },
  { method: 'DELETE', path: `${V1}/uploads/{id}`, operation: 'deleteUpload', auth: 'required', scope: 'uploads:delete', errors: ['NOT_FOUND'], summary: 'Delete an upload' },
  { method: 'GET', path: `${V1}/files/{id}`, operation: 'downloadFile', auth: 'required', scope: 'uploads:read', errors: ['NOT_FOUND'], summary: 'Download a file (a redirect to a short-lived URL)' },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function uploadDocs(): RouteDocs<(typeof uploadRoutes)[number]> {
  return {
    uploadFile: ({ json, envelopeOf, ref }) => ({
      tag: 'Uploads',
      description: 'multipart/form-data with the part `file`; JPEG, PNG or PDF judged by the bytes; the request is at most 6 MB (larger files: presign).',
      requestBody: { contentType: 'multipart/form-data', schema: { type: 'object', required: ['file'], properties: { file: FILE } } },
      responses: { 201: json(envelopeOf(ref('UploadResult')), 'The stored file.') },
      errors: [400, 413],
    }),
    uploadFiles: ({ json, envelopeOf, ref }) => ({
      tag: 'Uploads',
      requestBody: { contentType: 'multipart/form-data', schema: { type: 'object', required: ['files'], properties: { files: { type: 'array', maxItems: 10, items: FILE } } } },
      responses: { 201: json(envelopeOf({ type: 'object', required: ['files'], properties: { files: { type: 'array', items: ref('UploadResult') } } }), 'The stored files.') },
      errors: [400, 413],
    }),
    presignUpload: ({ json, envelopeOf }) => ({
      tag: 'Uploads',
      requestBody: {},
      responses: {
        201: json(
          envelopeOf({ type: 'object', required: ['url', 'fields', 'key'], properties: { url: STRING, fields: { type: 'object', additionalProperties: STRING }, key: STRING, expiresAt: STRING } }),
          'Where and how to POST the file.',
        ),
      },
      errors: [400, 422],
    }),
    completeUpload: ({ json, envelopeOf, ref }) => ({ tag: 'Uploads', requestBody: {}, responses: { 201: json(envelopeOf(ref('UploadResult')), 'The stored file.') }, errors: [400, 422] }),
  };
}
