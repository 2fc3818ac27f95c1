import { apiPath } from '../http/urls.js';

/**
 * Where an upload is served: a path of this API, built from the record's id only, behind the base
 * path (stage, custom domain mapping) the caller used (shared/http/urls.ts).
 */
export function fileUrl(base: { basePath?: string }, id: string): string {
  return apiPath(base, `/api/v1/files/${id}`);
}
