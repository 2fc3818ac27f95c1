/**
 * The upload family: multipart uploads, the presigned flow, the caller's upload list, deleting
 * and serving files. Thin: the work is in shared/uploads/service.ts, loaded (with busboy,
 * file-type and the AWS SDK) on first use.
 */
import { createApiHandler, type Operations } from '../../shared/http/stack.js';
import type { ApiRequest } from '../../shared/http/types.js';
import { routeKey } from '../../shared/core-routes.js';
import type { Caller, PresignInput } from '../../shared/uploads/service.js';

const V1 = '/api/v1';

function caller(req: ApiRequest): Caller {
  return { tenantId: req.auth!.tenantId, ownerId: req.auth!.user.id, basePath: req.basePath };
}

function multipart(req: ApiRequest) {
  return { contentType: req.headers['content-type'], body: req.rawBody };
}

/** The JSON body, which the stack has checked against the route's declared schema. */
function body<T>(req: ApiRequest): T {
  return req.body as T;
}

async function loadOperations() {
  // The limits too: nothing of shared/uploads/ is evaluated when the bundle loads.
  const [{ MAX_FILES }, { complete, downloadUrl, list, presign, remove, uploadMultipart }, { precompiled: bodies }] = await Promise.all([
    import('../../shared/uploads/limits.js'),
    import('../../shared/uploads/service.js'),
    import('../../shared/http/bodies/upload.generated.js'),
  ]);
  const operations: Operations = {
    [routeKey('POST', `${V1}/upload`)]: async (req) => {
      const [file] = await uploadMultipart(caller(req), multipart(req), { field: 'file', maxFiles: 1 });
      return { data: file };
    },
    [routeKey('POST', `${V1}/upload/multiple`)]: async (req) => ({
      data: { files: await uploadMultipart(caller(req), multipart(req), { field: 'files', maxFiles: MAX_FILES }) },
    }),
    [routeKey('POST', `${V1}/upload/presign`)]: async (req) => {
      const { filename, type, size } = body<PresignInput>(req);
      return { data: await presign(caller(req), { filename, type, size }) };
    },
    [routeKey('POST', `${V1}/upload/complete`)]: async (req) => ({ data: await complete(caller(req), body<{ key: string }>(req)) }),
    [routeKey('GET', `${V1}/uploads`)]: async (req) => {
      const { data, pagination } = await list(caller(req), req.query);
      const headers = { 'X-Total-Count': String(pagination.total), 'X-Page': String(pagination.page), 'X-Per-Page': String(pagination.limit) };
      return { data, pagination, headers };
    },
    [routeKey('DELETE', `${V1}/uploads/{id}`)]: async (req) => {
      await remove(caller(req), req.params.id);
      return { message: 'Upload deleted' };
    },
    [routeKey('GET', `${V1}/files/{id}`)]: async (req) => {
      const url = await downloadUrl(caller(req), req.params.id);
      return {
        status: 302,
        headers: { Location: url, 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff' },
        data: { url },
      };
    },
  };
  return { operations, options: { bodies } };
}

export const handler = createApiHandler(loadOperations);
