/**
 * The docs family serves Swagger UI's files itself (no CDN at run time). esbuild bundles code, not
 * these files, so they are copied into the docs bundle under node_modules/, where the handler's
 * `createRequire(...).resolve('swagger-ui-dist/...')` finds them in Lambda as it does locally.
 */
import { VENDOR_FILES, VENDOR_PACKAGE } from '../../shared/openapi/page.js';

/** Files (relative to the project root) a family's bundle carries beside its code, at the same relative path. */
export function bundleFilesFor(family: string): string[] {
  return family === 'docs' ? VENDOR_FILES.map((f) => `node_modules/${VENDOR_PACKAGE}/${f}`) : [];
}
