/**
 * The bootstrap admin custom resource through its lifecycle, as CloudFormation drives it: the
 * real handler against DynamoDB Local (a fresh identity table, reached through a proxy that can
 * refuse requests) and a Secrets Manager stand-in at the SDK level (aws-sdk-client-mock over an
 * in-memory secret store): Create, a repeated Create, Update after a password rotation, a
 * rollback's Update, transient failures retried, real failures reported at once, Delete.
 */
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { handler, PHYSICAL_RESOURCE_ID, TRANSIENT_ATTEMPTS, type BootstrapAdminProperties } from '../../../functions/bootstrap/handler.js';
import { createTableInput } from '../../../infra/local/tables.js';
import { verifyPassword } from '../../../shared/auth/passwords.js';
import { resetConfig } from '../../../shared/config.js';
import { createTenant, createUser, DEFAULT_TENANT_ID, getTenant, getUserByEmail } from '../../../shared/data/identity.js';
import { tables } from '../../../shared/tables.js';
import { startDynamoProxy, type DynamoProxy } from '../../support/dynamo-proxy.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:EntityRecordApiAdminPassword-AbC123';
const FIRST_PASSWORD = 'Gq8vT2mZk4Lr9Xw1Pn6Hs3Dc7Bf5Jy0A';
const ROTATED_PASSWORD = 'Rotated7Password2Value9Xk3Lm5Np8';
const EMAIL = 'ops@example.com';
const TABLE = `bootstrap-${randomBytes(4).toString('hex')}-identity`;

/** The Secrets Manager stand-in: secret id → its current string. */
const secretStore = new Map<string, string>();
const secrets = mockClient(SecretsManagerClient);
let proxy: DynamoProxy;
let admin: DynamoDBClient;

function event(requestType: 'Create' | 'Update' | 'Delete', properties: Partial<BootstrapAdminProperties> = {}, old: Partial<BootstrapAdminProperties> = {}): CloudFormationCustomResourceEvent<BootstrapAdminProperties> {
  const resourceProperties = { ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider', AdminEmail: EMAIL, AdminPasswordSecretArn: SECRET_ARN, AdminPasswordRevision: 'r1', ...properties };
  const common = {
    ServiceToken: resourceProperties.ServiceToken,
    ResponseURL: 'https://cloudformation-custom-resource-response.example/',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/EntityRecordApi/1',
    RequestId: randomBytes(8).toString('hex'),
    LogicalResourceId: 'BootstrapAdminResource',
    ResourceType: 'Custom::BootstrapAdmin',
    ResourceProperties: resourceProperties,
  };
  if (requestType === 'Create') return { ...common, RequestType: 'Create' };
  if (requestType === 'Update') return { ...common, RequestType: 'Update', PhysicalResourceId: PHYSICAL_RESOURCE_ID, OldResourceProperties: { ...resourceProperties, ...old } };
  return { ...common, RequestType: 'Delete', PhysicalResourceId: PHYSICAL_RESOURCE_ID };
}

async function passwordWorks(password: string): Promise<boolean> {
  const user = await getUserByEmail(EMAIL);
  return user !== undefined && verifyPassword(password, user.passwordHash);
}

beforeAll(async () => {
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  // The handler's clients read these on first use, as on Lambda.
  process.env.DYNAMODB_ENDPOINT = proxy.url;
  process.env.TABLE_IDENTITY = TABLE;
  resetConfig();
  admin = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await admin.send(new CreateTableCommand(createTableInput(tables.find((t) => t.id === 'identity')!, TABLE)));
  secretStore.set(SECRET_ARN, FIRST_PASSWORD);
});

afterAll(async () => {
  await admin.send(new DeleteTableCommand({ TableName: TABLE }));
  admin.destroy();
  await proxy.stop();
  secrets.restore();
});

beforeEach(() => {
  secrets.reset();
  secrets.on(GetSecretValueCommand).callsFake(({ SecretId }: { SecretId: string }) => {
    const value = secretStore.get(SecretId);
    if (value === undefined) throw Object.assign(new Error("Secrets Manager can't find the specified secret."), { name: 'ResourceNotFoundException' });
    return { ARN: SecretId, SecretString: value };
  });
  proxy.refuse = undefined;
});

describe('bootstrap admin custom resource lifecycle', { timeout: 60_000 }, () => {
  it('Create makes the default tenant and the admin with the secret password, operator of the platform', async () => {
    const response = await handler(event('Create'));

    expect(response).toEqual({ PhysicalResourceId: PHYSICAL_RESOURCE_ID, Data: { AdminEmail: EMAIL } });
    const user = (await getUserByEmail(EMAIL))!;
    expect(user).toMatchObject({ tenantId: DEFAULT_TENANT_ID, role: 'admin' });
    expect(await passwordWorks(FIRST_PASSWORD)).toBe(true);
    expect((await getTenant(DEFAULT_TENANT_ID))!.operatorUserId).toBe(user.id);
  });

  it('a repeated Create (a retried event) changes nothing and does not fail', async () => {
    const before = (await getUserByEmail(EMAIL))!;

    const response = await handler(event('Create'));

    const after = (await getUserByEmail(EMAIL))!;
    expect(response.PhysicalResourceId).toBe(PHYSICAL_RESOURCE_ID);
    expect(after.id).toBe(before.id);
    expect(after.passwordHash).toBe(before.passwordHash);
  });

  it('Update after the secret was rotated makes the new password work and the old one not, keeping the admin and the physical id', async () => {
    const id = (await getUserByEmail(EMAIL))!.id;
    secretStore.set(SECRET_ARN, ROTATED_PASSWORD);

    const response = await handler(event('Update', { AdminPasswordRevision: 'r2' }, { AdminPasswordRevision: 'r1' }));

    expect(response.PhysicalResourceId).toBe(PHYSICAL_RESOURCE_ID);
    expect((await getUserByEmail(EMAIL))!.id).toBe(id);
    expect(await passwordWorks(ROTATED_PASSWORD)).toBe(true);
    expect(await passwordWorks(FIRST_PASSWORD)).toBe(false);
  });

  it("a rollback's Update (the old properties again) succeeds and leaves the secret's current password working", async () => {
    const response = await handler(event('Update', { AdminPasswordRevision: 'r1' }, { AdminPasswordRevision: 'r2' }));

    expect(response.PhysicalResourceId).toBe(PHYSICAL_RESOURCE_ID);
    expect(await passwordWorks(ROTATED_PASSWORD)).toBe(true);
  });

  it('retries transient failures of Secrets Manager and DynamoDB, and succeeds', async () => {
    let throttled = 0;
    secrets.on(GetSecretValueCommand).callsFake(({ SecretId }: { SecretId: string }) => {
      if (throttled++ === 0) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
      return { ARN: SecretId, SecretString: secretStore.get(SecretId) };
    });
    // Every request to the identity table fails with a 500 for the first 4 (the SDK's own 3 attempts, and one more).
    let refused = 0;
    proxy.refuse = (_, body) => body.includes(TABLE) && refused++ < 4;

    const response = await handler(event('Update', { AdminPasswordRevision: 'r3' }, { AdminPasswordRevision: 'r2' }));

    expect(response.PhysicalResourceId).toBe(PHYSICAL_RESOURCE_ID);
    expect(throttled).toBe(2);
    expect(refused).toBeGreaterThan(4);
    expect(await passwordWorks(ROTATED_PASSWORD)).toBe(true);
  });

  it('gives up on a transient failure that lasts, saying so, after a bounded number of attempts', async () => {
    let calls = 0;
    secrets.on(GetSecretValueCommand).callsFake(() => {
      calls++;
      throw Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } });
    });

    await expect(handler(event('Update', { AdminPasswordRevision: 'r4' }))).rejects.toThrow(
      new RegExp(`^Bootstrap admin ops@example\\.com failed: ServiceUnavailable: Service unavailable \\(transient, still failing after ${TRANSIENT_ATTEMPTS} attempts\\)$`),
    );
    expect(calls).toBe(TRANSIENT_ATTEMPTS);
  });

  it('reports a real failure at once with its reason: no such secret, an e-mail of another tenant', async () => {
    secretStore.delete(SECRET_ARN);
    const missing = await handler(event('Update')).catch((error: Error) => error);
    expect((missing as Error).message).toMatch(/^Bootstrap admin ops@example\.com failed: ResourceNotFoundException: Secrets Manager can't find the specified secret\.$/);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    secretStore.set(SECRET_ARN, ROTATED_PASSWORD);

    const tenant = await createTenant({ name: `Other ${randomBytes(3).toString('hex')}` });
    await createUser({ tenantId: tenant.id, email: 'taken@example.com', name: 'Taken', role: 'admin', passwordHash: 'x' });
    const taken = await handler(event('Update', { AdminEmail: 'taken@example.com' })).catch((error: Error) => error);
    expect((taken as Error).message).toMatch(/^Bootstrap admin taken@example\.com failed: .*belongs to tenant ten_\w+, not to the default tenant ten_default/);
    expect((taken as Error).message).not.toContain(ROTATED_PASSWORD);
  });

  it('Delete touches neither the secret nor the table, and the admin stays', async () => {
    const before = proxy.requests.length;

    const response = await handler(event('Delete'));

    expect(response).toEqual({ PhysicalResourceId: PHYSICAL_RESOURCE_ID });
    expect(proxy.requests.length).toBe(before);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(0);
    expect(await passwordWorks(ROTATED_PASSWORD)).toBe(true);
  });
});
