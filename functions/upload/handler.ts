/**
 * The upload family: multipart uploads, the presigned flow, the caller's upload list, deleting
 * and serving files. Thin: the work is in shared/uploads/service.ts, loaded (with busboy,
 * file-type and the AWS SDK) on first use.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import type { ApiRequest, FamilyOperations } from '../../shared/http/types.js';
import type { Caller } from '../../shared/uploads/service.js';

function caller(req: ApiRequest): Caller {
  return { tenantId: req.auth!.tenantId, ownerId: req.auth!.user.id, basePath: req.basePath };
}

function multipart(req: ApiRequest) {
  return { contentType: req.headers['content-type'], body: req.rawBody };
}

async function loadOperations() {
  // The limits too: nothing of shared/uploads/ is evaluated when the bundle loads.
  const [{ MAX_FILES }, { complete, downloadUrl, list, presign, remove, uploadMultipart }, { precompiled: bodies }] = await Promise.all([
    import('../../shared/uploads/limits.js'),
    import('../../shared/uploads/service.js'),
    import('../../shared/http/bodies/upload.generated.js'),
  ]);
  // The presigned flow's bodies arrive checked against their declared schemas, typed by them.
  const operations: FamilyOperations<'upload'> = {
    uploadFile: async (req) => {
      const [file] = await uploadMultipart(caller(req), multipart(req), { field: 'file', maxFiles: 1 });
      return { data: file };
    },
    uploadFiles: async (req) => ({
      data: { files: await uploadMultipart(caller(req), multipart(req), { field: 'files', maxFiles: MAX_FILES }) },
    }),
    presignUpload: async (req) => {
      const { filename, type, size } = req.body;
      return { data: await presign(caller(req), { filename, type, size }) };
    },
    completeUpload: async (req) => ({ data: await complete(caller(req), req.body) }),
    listUploads: async (req) => {
      const { data, pagination } = await list(caller(req), req.query);
      const headers = { 'X-Total-Count': String(pagination.total), 'X-Page': String(pagination.page), 'X-Per-Page': String(pagination.limit) };
      return { data, pagination, headers };
    },
    deleteUpload: async (req) => {
      await remove(caller(req), req.params.id);
      return { message: 'Upload deleted' };
    },
    downloadFile: async (req) => {
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
