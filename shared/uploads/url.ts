import { apiPath } from '../urls.js';

/**
 * Where an upload is served: a path of this API, built from the record's id only, behind the base
 * path (stage, custom domain mapping) the caller used (shared/urls.ts).
 */
export function fileUrl(base: { basePath?: string }, id: string): string {
  return apiPath(base, `/api/v1/files/${id}`);
}
