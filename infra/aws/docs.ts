/**
 * Static files some bundles carry beside their code (esbuild bundles code, not these files):
 * - docs: Swagger UI's files, under node_modules/, where the handler's
 *   `createRequire(...).resolve('swagger-ui-dist/...')` finds them in Lambda as it does locally;
 * - dashboard: the built dashboard (dashboard/dist, built first when stale), found by
 *   functions/dashboard/files.ts in the nearest dashboard/dist above it.
 */
import { dashboardFiles } from '../../dashboard/build.js';
import { VENDOR_FILES, VENDOR_PACKAGE } from '../../shared/openapi/page.js';

/** Files (relative to the project root) a family's bundle carries beside its code, at the same relative path. */
export function bundleFilesFor(family: string): string[] {
  if (family === 'docs') return VENDOR_FILES.map((f) => `node_modules/${VENDOR_PACKAGE}/${f}`);
  if (family === 'dashboard') return dashboardFiles();
  return [];
}
