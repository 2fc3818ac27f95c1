/**
 * Each operation of the document lists every status it answers on ordinary misuse: those of the
 * codes its route declares, and those the stack answers by the route's properties.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type OpenApiDocument } from '../../../shared/openapi/document.js';
import { ERROR_CATALOGUE } from '../../../shared/errors.js';
import { loadDefinitions } from '../../../shared/registry/index.js';
import { routes } from '../../../shared/routes.js';

type Op = { security?: unknown[]; requestBody?: unknown; responses: Record<string, unknown> };

let doc: OpenApiDocument;

beforeAll(async () => {
  doc = buildOpenApiDocument({ routes, entities: await loadDefinitions(), version: '1' });
});

function operations(): { path: string; method: string; op: Op }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op: op as unknown as Op })));
}

const statuses = (op: Op) => Object.keys(op.responses).map(Number);

describe('the error responses of each operation', () => {
  it('lists 412 where a record is changed with If-Match', () => {
    const patch = doc.paths['/api/v1/tasks/{id}'].patch as unknown as Op;
    const remove = doc.paths['/api/v1/tasks/{id}'].delete as unknown as Op;

    expect(statuses(patch)).toEqual(expect.arrayContaining([400, 401, 403, 404, 409, 412, 413, 422, 429, 500, 503, 504]));
    expect(statuses(remove)).toEqual(expect.arrayContaining([404, 412]));
    expect(patch.responses[412]).toEqual({ $ref: '#/components/responses/PreconditionFailed' });
  });

  it('lists the statuses of the codes only some routes answer (402, 405, 429 of streams, 502, 503 of imports)', () => {
    expect(statuses(doc.paths['/api/v1/ai/generate'].post as unknown as Op)).toEqual(expect.arrayContaining([402, 502, 503, 504]));
    expect(statuses(doc.paths['/api/v1/tasks'].get as unknown as Op)).toContain(405);
    expect(statuses(doc.paths['/api/v1/graphql'].get as unknown as Op)).toContain(405);
    expect(statuses(doc.paths['/api/v1/stream/tasks'].get as unknown as Op)).toContain(429);
    expect(statuses(doc.paths['/api/v1/import/tasks'].post as unknown as Op)).toEqual(expect.arrayContaining([409, 422, 503]));
    expect(statuses(doc.paths['/api/v1/webhooks'].post as unknown as Op)).toContain(409);
  });

  it('lists 401 and 403 wherever credentials are needed, 400 and 413 wherever a body is taken, 404 wherever the path has a parameter', () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      const expected = [500];
      if (op.security?.length && !op.security.some((s) => Object.keys(s as object).length === 0)) expected.push(401, 403);
      if (op.requestBody) expected.push(400, 413);
      if (path.includes('{')) expected.push(404);
      for (const status of expected) if (!statuses(op).includes(status)) missing.push(`${method.toUpperCase()} ${path}: ${status}`);
    }

    expect(missing).toEqual([]);
  });

  it('lists the status of every code its route declares', () => {
    const missing: string[] = [];
    for (const route of routes.filter((r) => !r.path.includes('{entity}'))) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()] as unknown as Op | undefined;
      if (!op) continue;
      for (const code of route.errors ?? []) {
        const status = ERROR_CATALOGUE[code].status;
        if (!statuses(op).includes(status)) missing.push(`${route.method} ${route.path}: ${status} (${code})`);
      }
    }

    expect(missing).toEqual([]);
  });

  it('lists 429 on every rate-limited operation and never on the uncounted ones', () => {
    for (const { path, op } of operations()) {
      const uncounted = path === '/api/health' || path.startsWith('/api/docs') || path.startsWith('/dashboard') || path === '/api/v1/openapi.json';
      expect(statuses(op).includes(429), path).toBe(!uncounted);
    }
  });
});
