import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type OpenApiDocument } from '../../../shared/openapi/document.js';
import { loadDefinitions, type LoadedEntity } from '../../../shared/registry/index.js';
import { routes, type Route } from '../../../shared/routes.js';

const WIDGETS = `export default {
  name: 'widget',
  slug: 'widgets',
  tableName: 'widgets',
  idFormat: { type: 'prefixed', prefix: 'wdg' },
  fields: {
    label: { type: 'string', required: true, maxLength: 80, searchable: true },
    size: { type: 'enum', values: ['s', 'm', 'l'], default: 'm' },
    weight: { type: 'number', validation: { min: 0 } },
  },
  access: { public: false, shared: true },
  operations: { list: true, create: true, read: true, update: true, delete: false },
};
`;

let builtIn: LoadedEntity[];
let dir: string;

beforeAll(async () => {
  builtIn = await loadDefinitions();
  dir = await mkdtemp(join(tmpdir(), 'entities-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function build(entities: LoadedEntity[] = builtIn, table: readonly Route[] = routes): OpenApiDocument {
  return buildOpenApiDocument({ routes: table, entities, version: '1.2.3' });
}

type Op = Record<string, any>;
const op = (doc: OpenApiDocument, path: string, method: string): Op => doc.paths[path]?.[method] as Op;

describe('buildOpenApiDocument', () => {
  it('adds the paths, schemas and tag of a new entity definition file', async () => {
    await writeFile(join(dir, 'widgets.ts'), WIDGETS);
    const widgets = await loadDefinitions({ dir });
    const before = build();

    const after = build([...builtIn, ...widgets]);

    expect(before.paths['/api/v1/widgets']).toBeUndefined();
    expect(Object.keys(after.paths['/api/v1/widgets'])).toEqual(['get', 'post', 'options', 'patch']);
    expect(Object.keys(after.paths['/api/v1/widgets/{id}'])).toEqual(['get', 'patch']);
    expect(after.paths['/api/v1/import/widgets']).toBeDefined();
    expect(after.components.schemas).toHaveProperty('Widget');
    expect(after.components.schemas.WidgetCreate).toMatchObject({ required: ['label'], additionalProperties: false });
    expect(after.components.schemas.WidgetFilter).toBeDefined();
    expect(after.tags.map((t) => t.name)).toContain('widgets');
    expect(op(after, '/api/v1/widgets', 'post').security).toContainEqual({ bearerApiKey: ['widgets:write'] });
  });

  it('is deterministic: the same sources give the same document', () => {
    expect(JSON.stringify(build())).toBe(JSON.stringify(build([...builtIn].reverse())));
  });

  it('describes each entity operation with the scopes of its route and leaves out disabled operations', () => {
    const doc = build();

    expect(op(doc, '/api/v1/tasks', 'get').security).toEqual([{ bearerApiKey: ['tasks:read'] }, { apiKeyHeader: ['tasks:read'] }, { sessionCookie: [] }]);
    // Products are public: anonymous reads are allowed.
    expect(op(doc, '/api/v1/products', 'get').security).toContainEqual({});
    expect(op(doc, '/api/v1/orders/{id}', 'delete')).toBeUndefined();
    expect(op(doc, '/api/v1/keys', 'get').security).toEqual([{ sessionCookie: [] }]);
    expect(op(doc, '/api/health', 'get').security).toEqual([]);
  });

  it('lists every LIST parameter, the filter with its operators, and the child collections', () => {
    const doc = build();
    const names = (op(doc, '/api/v1/tasks', 'get').parameters as Op[]).map((p) => p.name ?? (doc.components.parameters[p.$ref.split('/').pop()] as Op).name);

    expect(names).toEqual(expect.arrayContaining(['page', 'limit', 'cursor', 'filter', 'search', 'sort', 'order', 'fields', 'include', 'startDate', 'endDate', 'ids', 'metas', 'includeMetadata', 'mergeMetadata', 'mergeStrategy', 'status', 'priority']));
    const filter = (doc.components.schemas.TaskFilter as Op).properties.status.anyOf[2];
    expect(Object.keys(filter.properties)).toEqual(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$startsWith', '$endsWith', '$null']);
    expect(doc.paths['/api/v1/tasks/{id}/comments']).toHaveProperty('get');
    expect(doc.paths['/api/v1/tasks/{id}/tags']).toHaveProperty('post');
  });

  it('lists an aggregate\'s own parameters before LIST\'s filters, with examples of the entity\'s own fields', () => {
    const aggregate: Op = build().paths['/api/v1/orders/aggregate'].get;
    const parameters = Object.fromEntries((aggregate.parameters as Op[]).filter((p) => p.name).map((p) => [p.name, p]));

    expect(Object.keys(parameters).slice(0, 8)).toEqual(['count', 'sum', 'avg', 'min', 'max', 'groupBy', 'interval', 'filter']);
    expect(parameters.sum).toMatchObject({ in: 'query', example: 'total', description: expect.stringContaining('number fields') });
    expect(parameters.groupBy.example).toBe('status');
    expect(((build().paths['/api/v1/tasks/aggregate'].get as Op).parameters as Op[]).find((p) => p.name === 'sum')?.example).toBeUndefined();
  });

  it('gives counted operations the rate-limit headers and 429, and every operation the error envelope', () => {
    const doc = build();
    const list = op(doc, '/api/v1/tasks', 'get');

    expect(Object.keys(list.responses[200].headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag', 'X-Total-Count', 'Link']));
    expect(list.responses[429]).toEqual({ $ref: '#/components/responses/TooManyRequests' });
    expect(op(doc, '/api/health', 'get').responses[429]).toBeUndefined();
    expect((doc.components.responses.Unauthorized as Op).content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect((doc.components.responses.Unauthorized as Op).description).toContain('INVALID_API_KEY');
  });

  it('describes a route it has no description for generically, with the JSON Schemas the route carries', () => {
    const plugin = {
      method: 'POST',
      path: '/api/v1/reports/{reportId}/run',
      family: 'plugins',
      auth: 'required',
      scope: 'reports:write',
      requestSchema: { type: 'object', required: ['format'], properties: { format: { type: 'string', enum: ['pdf', 'csv'] } } },
      responseSchema: { type: 'object', properties: { url: { type: 'string' } } },
    } as unknown as Route & { responseSchema: object };

    const doc = build(builtIn, [...routes, plugin]);
    const run = op(doc, '/api/v1/reports/{reportId}/run', 'post');

    expect(run.tags).toEqual(['Plugins']);
    expect(run.operationId).toBe('postReportsByReportIdRun');
    expect(run.parameters).toContainEqual(expect.objectContaining({ name: 'reportId', in: 'path', required: true }));
    expect(run.requestBody.content['application/json'].schema.required).toEqual(['format']);
    expect(run.responses[201].content['application/json'].schema.properties.data).toEqual(plugin.responseSchema);
    expect(run.security).toContainEqual({ bearerApiKey: ['reports:write'] });
  });

  it('takes a route\'s summary and schemas from the family that declares it', () => {
    const plugin = { method: 'POST', path: '/api/v1/salutations', family: 'plugins', auth: 'required' } as unknown as Route;
    const details = { summary: 'Greet someone', requestSchema: { type: 'object', required: ['name'] }, responseSchema: { type: 'object', properties: { text: { type: 'string' } } } };

    const doc = buildOpenApiDocument({ routes: [...routes, plugin], entities: builtIn, version: '1', routeDetails: (r) => (r === plugin ? details : undefined) });
    const greet = op(doc, '/api/v1/salutations', 'post');

    expect(greet.summary).toBe('Greet someone');
    expect(greet.requestBody.content['application/json'].schema).toEqual(details.requestSchema);
    expect(greet.responses[201].content['application/json'].schema.properties.data).toEqual(details.responseSchema);
  });

  it('adds the webhook deliveries (3.1 webhooks) with their payload and signature header once webhooks are routed', () => {
    const register = { method: 'POST', path: '/api/v1/webhooks', family: 'webhooks', auth: 'required', scope: 'webhooks:write' } as unknown as Route;

    const doc = build(builtIn, [...routes, register]);

    expect(build(builtIn, routes.filter((r) => r.family !== 'webhooks')).webhooks).toBeUndefined();
    const created = (doc.webhooks!['task.created'] as Op).post;
    expect(created.parameters).toContainEqual(expect.objectContaining({ name: 'x-webhook-signature', in: 'header', required: true }));
    expect(created.requestBody.content['application/json'].schema).toMatchObject({ required: ['id', 'type', 'createdAt', 'data'], properties: { type: { const: 'task.created' } } });
    expect(op(doc, '/api/v1/webhooks', 'post').operationId).toBe('createWebhook');
  });

  it('gives every operation a unique operationId and a tag the document declares', () => {
    const doc = build();
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p)) as Op[];
    const ids = ops.map((o) => o.operationId);
    const declared = new Set(doc.tags.map((t) => t.name));

    expect(new Set(ids).size).toBe(ids.length);
    expect(ops.flatMap((o) => o.tags).filter((t: string) => !declared.has(t))).toEqual([]);
  });
});
