/**
 * The system components of the OpenAPI document (shared/openapi/system.ts, components.ts) against
 * what the running API returns: every field of a real answer is declared, and the answer validates
 * against its component. The response check of responses.int.test.ts lets undeclared fields
 * through (components allow more properties); this one does not.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, uniqueEmail, type TestTenant } from '../../support/identity.js';
import { ResponseValidator } from '../../support/openapi.js';
import { multipart, PNG } from '../../functions/upload/files.js';

type Json = Record<string, any>;

let doc: Json;
let validator: ResponseValidator;
let tenant: TestTenant;

beforeAll(async () => {
  doc = (await api('GET', '/api/v1/openapi.json')).body;
  validator = new ResponseValidator(doc);
  tenant = await newTenant();
});

/** The property names a component declares, through allOf and $ref. */
function declared(schema: Json): Set<string> {
  if (schema.$ref) return declared(doc.components.schemas[String(schema.$ref).split('/').pop()!]);
  const names = new Set(Object.keys(schema.properties ?? {}));
  for (const part of schema.allOf ?? []) for (const name of declared(part)) names.add(name);
  return names;
}

function expectDescribed(component: string, value: Json): void {
  const schema = doc.components.schemas[component];
  const undeclared = Object.keys(value).filter((name) => !declared(schema).has(name));
  expect(undeclared, `${component}: fields the API returns and the document does not declare`).toEqual([]);
  const validate = validator.component(component);
  expect(validate(value), `${component}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe('the system components describe what the API returns', () => {
  it('Webhook: a registered, then disabled webhook', async () => {
    const created = await api('POST', '/api/v1/webhooks', {
      cookie: tenant.admin.cookie,
      body: { url: 'https://93.184.215.14/hooks/schemas', events: ['task.created'], secret: 'schemas-secret-0123456789' },
    });
    const disabled = await api('PATCH', `/api/v1/webhooks/${created.body.data.id}`, { cookie: tenant.admin.cookie, body: { status: 'disabled' } });

    expect(created.status).toBe(201);
    expectDescribed('Webhook', created.body.data);
    expectDescribed('Webhook', disabled.body.data);
  });

  it('CreatedApiKey, ApiKey and AuditEntry: a key created, changed and audited', async () => {
    const created = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'schemas', scopes: ['tasks:read'] } });
    const id = created.body.data.id;
    await api('PATCH', `/api/v1/api-keys/${id}`, { cookie: tenant.admin.cookie, body: { name: 'schemas renamed' } });
    const read = await api('GET', `/api/v1/api-keys/${id}`, { cookie: tenant.admin.cookie });
    const audit = await api('GET', `/api/v1/api-keys/${id}/audit`, { cookie: tenant.admin.cookie });

    expectDescribed('CreatedApiKey', created.body.data);
    expectDescribed('ApiKey', read.body.data);
    expect(audit.body.data.length).toBeGreaterThan(1);
    for (const entry of audit.body.data) expectDescribed('AuditEntry', entry);
  });

  it('UploadResult: an uploaded file', async () => {
    const { body, contentType } = multipart([{ name: 'file', filename: 'dot.png', type: 'image/png', data: PNG }]);
    const uploaded = await api('POST', '/api/v1/upload', { cookie: tenant.admin.cookie, rawBody: body, headers: { 'Content-Type': contentType } });

    expect(uploaded.status).toBe(201);
    expectDescribed('UploadResult', uploaded.body.data);
  });

  it('User and Tenant: the caller and its tenant', async () => {
    const me = await api('GET', '/api/v1/users/me', { cookie: tenant.admin.cookie });
    const own = await api('GET', '/api/v1/tenants/me', { cookie: tenant.admin.cookie });

    expectDescribed('User', me.body.data);
    expectDescribed('Tenant', own.body.data);
  });

  it("CreatedTenant and MigrationState: the platform operator's tenant and migration states", async () => {
    const operator = await loginAsOperator();
    const created = await api('POST', '/api/v1/tenants', { cookie: operator, body: { name: 'Schemas tenant', admin: { email: uniqueEmail('schemas'), name: 'Schemas Admin', password: 'a long password 4' } } });
    const migrations = await api('GET', '/api/v1/migrations', { cookie: operator });

    expect(created.status).toBe(201);
    expectDescribed('CreatedTenant', created.body.data);
    expect(migrations.body.data.length).toBeGreaterThan(0);
    for (const state of migrations.body.data) expectDescribed('MigrationState', state);
  });
});
