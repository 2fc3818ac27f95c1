/**
 * The API reference page at /api/docs: Swagger UI (swagger-ui-dist, served by the docs family
 * itself, never from a CDN) over /api/v1/openapi.json, with "try it" on the same origin. The page
 * and its assets use relative URLs, so they work under a stage prefix (/prod/api/docs) too.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { NotFoundError } from '../errors.js';

/** The files of swagger-ui-dist the page loads; infra/aws copies them into the docs bundle. */
export const VENDOR_PACKAGE = 'swagger-ui-dist';
export const VENDOR_FILES = ['package.json', 'swagger-ui-bundle.js', 'swagger-ui.css'] as const;

export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Swagger UI sets style attributes from React.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Entity Record API reference</title>
<link rel="stylesheet" href="{{docs}}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{docs}}/swagger-ui-bundle.js"></script>
<script src="{{docs}}/init.js"></script>
</body>
</html>
`;

// The page's own script (no inline script, so the CSP can forbid them). Cookies go along with
// "try it" (same origin), so a logged-in browser session works as is.
// The document is found from this script's own URL, so the page works at /api/docs and /api/docs/.
// Before Swagger UI draws it, the document is read and shown as this page uses it:
// - "Try it out" starts empty: a parameter's example and default (which Swagger UI puts in the
//   inputs, so Execute sent a filtered, partial list) move into its description, where they stay
//   readable;
// - the server entry is this deployment's own address (the document names it relatively, '../..',
//   which the dropdown showed as is).
const INIT = `(function () {
  var documentUrl = new URL('../v1/openapi.json', document.currentScript.src).href;
  var server = new URL('../..', documentUrl).href.replace(/\\/$/, '');
  function show(value) { return '\u0060' + (typeof value === 'string' ? value : JSON.stringify(value)) + '\u0060'; }
  function emptied(parameter) {
    var notes = [];
    var schema = parameter.schema || {};
    if (schema.default !== undefined) { notes.push('Default: ' + show(schema.default) + '.'); delete schema.default; }
    var example = parameter.example !== undefined ? parameter.example : schema.example;
    if (example === undefined && parameter.examples) {
      var first = Object.keys(parameter.examples)[0];
      if (first) example = parameter.examples[first].value;
    }
    if (example !== undefined) notes.push('Example: ' + show(example) + '.');
    delete parameter.example; delete parameter.examples; delete schema.example; delete schema.examples;
    if (notes.length) parameter.description = ((parameter.description || '') + ' ' + notes.join(' ')).trim();
  }
  function each(list) { (list || []).forEach(function (p) { if (p && !p.$ref) emptied(p); }); }
  fetch(documentUrl, { credentials: 'same-origin' })
    .then(function (response) { return response.json(); })
    .then(function (spec) {
      spec.servers = [{ url: server, description: 'This deployment' }];
      Object.keys((spec.components && spec.components.parameters) || {}).forEach(function (name) { emptied(spec.components.parameters[name]); });
      Object.keys(spec.paths || {}).forEach(function (path) {
        var item = spec.paths[path];
        each(item.parameters);
        Object.keys(item).forEach(function (method) { if (item[method] && item[method].parameters) each(item[method].parameters); });
      });
      window.ui = SwaggerUIBundle({
        spec: spec,
        dom_id: '#swagger-ui',
        deepLinking: true,
        // Tags start collapsed: the page renders at once however many entities the registry has.
        docExpansion: 'none',
        defaultModelsExpandDepth: 0,
        displayRequestDuration: true,
        filter: true,
        withCredentials: true,
        validatorUrl: null,
      });
    })
    .catch(function (error) {
      document.getElementById('swagger-ui').textContent = 'The API description (' + documentUrl + ') could not be read: ' + error.message;
    });
})();
`;

export interface Asset {
  body: string;
  contentType: string;
}

const resolveFrom = createRequire(import.meta.url);
const vendor = new Map<string, Asset>();

function vendorFile(name: string, contentType: string): Asset {
  let asset = vendor.get(name);
  if (!asset) {
    asset = { body: readFileSync(resolveFrom.resolve(`${VENDOR_PACKAGE}/${name}`), 'utf8'), contentType };
    vendor.set(name, asset);
  }
  return asset;
}

/**
 * The page, its assets named by absolute path (`docsPath`: where the client reaches /api/docs,
 * stage or base path included), so that it works with or without a trailing slash.
 */
export function docsPage(docsPath = '/api/docs'): Asset {
  const escaped = docsPath.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return { body: PAGE.replaceAll('{{docs}}', escaped), contentType: 'text/html; charset=utf-8' };
}

/** An asset of the page by name; anything else is 404. */
export function docsAsset(name: string): Asset {
  switch (name) {
    case 'init.js':
      return { body: INIT, contentType: 'text/javascript; charset=utf-8' };
    case 'swagger-ui-bundle.js':
      return vendorFile(name, 'text/javascript; charset=utf-8');
    case 'swagger-ui.css':
      return vendorFile(name, 'text/css; charset=utf-8');
    default:
      throw new NotFoundError(`No docs asset named '${name}'`);
  }
}
