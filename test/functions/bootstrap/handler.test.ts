/**
 * The bootstrap admin custom resource handler, without I/O: Secrets Manager and DynamoDB are
 * mocked (aws-sdk-client-mock), the identity table is a tiny in-memory map.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handler, PHYSICAL_RESOURCE_ID, redact, type BootstrapAdminProperties } from '../../../functions/bootstrap/handler.js';
import { ensureBootstrapAdmin } from '../../../shared/auth/bootstrap.js';
import { verifyPassword } from '../../../shared/auth/passwords.js';
import { logger } from '../../../shared/logger.js';
import { answerFromMap, type Items } from '../../support/identity-table-mock.js';

vi.mock('../../../shared/auth/bootstrap.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../shared/auth/bootstrap.js')>();
  return { ...actual, ensureBootstrapAdmin: vi.fn(actual.ensureBootstrapAdmin) };
});

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin-AbC123';
const PASSWORD = 'Gq8vT2mZk4Lr9Xw1Pn6Hs3Dc7Bf5Jy0A';

const secrets = mockClient(SecretsManagerClient);
const dynamo = mockClient(DynamoDBDocumentClient);
let items: Items;


function event(
  requestType: 'Create' | 'Update' | 'Delete',
  properties: Partial<BootstrapAdminProperties> = {},
): CloudFormationCustomResourceEvent<BootstrapAdminProperties> {
  const common = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/EntityRecordApi/1',
    RequestId: 'request-1',
    LogicalResourceId: 'BootstrapAdminA3E453FC',
    ResourceType: 'Custom::BootstrapAdmin',
    ResourceProperties: {
      ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
      AdminEmail: 'Ops@Example.com',
      AdminPasswordSecretArn: SECRET_ARN,
      AdminPasswordRevision: '0123456789abcdef',
      ...properties,
    },
  };
  if (requestType === 'Create') return { ...common, RequestType: 'Create' };
  if (requestType === 'Update') return { ...common, RequestType: 'Update', PhysicalResourceId: PHYSICAL_RESOURCE_ID, OldResourceProperties: common.ResourceProperties };
  return { ...common, RequestType: 'Delete', PhysicalResourceId: PHYSICAL_RESOURCE_ID };
}

function userByEmail(email: string): Record<string, any> | undefined {
  const pointer = items.get(`EMAIL#${email}`);
  return pointer && items.get(`USER#${pointer.userId}`);
}

beforeEach(() => {
  vi.mocked(ensureBootstrapAdmin).mockClear();
  items = answerFromMap(dynamo);
  secrets.reset();
  secrets.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({ SecretString: PASSWORD });
});

describe('bootstrap admin custom resource handler', () => {
  it('on Create reads the secret and ensures the admin with its password', async () => {
    const response = await handler(event('Create'));

    expect(secrets.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input)).toEqual([{ SecretId: SECRET_ARN }]);
    expect(ensureBootstrapAdmin).toHaveBeenCalledWith({ email: 'ops@example.com', password: PASSWORD });
    const admin = userByEmail('ops@example.com')!;
    expect(admin).toMatchObject({ tenantId: 'ten_default', role: 'admin' });
    expect(await verifyPassword(PASSWORD, admin.passwordHash)).toBe(true);
    expect(items.get('TENANT#ten_default')).toMatchObject({ operatorUserId: admin.id });
    expect(response).toEqual({ PhysicalResourceId: PHYSICAL_RESOURCE_ID, Data: { AdminEmail: 'ops@example.com' } });
    expect(JSON.stringify(response)).not.toContain(PASSWORD);
  });

  it('on Update with a new password in the secret makes the new password work, keeping the physical id', async () => {
    await handler(event('Create'));
    const id = userByEmail('ops@example.com')!.id;
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'a-rotated-password-1234' });

    const response = await handler(event('Update', { AdminPasswordRevision: 'fedcba9876543210' }));

    expect(ensureBootstrapAdmin).toHaveBeenLastCalledWith({ email: 'ops@example.com', password: 'a-rotated-password-1234' });
    const admin = userByEmail('ops@example.com')!;
    expect(admin.id).toBe(id);
    expect(await verifyPassword('a-rotated-password-1234', admin.passwordHash)).toBe(true);
    expect(response.PhysicalResourceId).toBe(PHYSICAL_RESOURCE_ID);
  });

  it('uses admin@localhost when the resource names no e-mail', async () => {
    await handler(event('Create', { AdminEmail: '' }));

    expect(ensureBootstrapAdmin).toHaveBeenCalledWith({ email: 'admin@localhost', password: PASSWORD });
  });

  it("reads the 'password' field of a JSON secret", async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ username: 'admin', password: PASSWORD }) });

    await handler(event('Create'));

    expect(ensureBootstrapAdmin).toHaveBeenCalledWith({ email: 'ops@example.com', password: PASSWORD });
  });

  it('on Delete does nothing: no secret read, no table access, the physical id kept', async () => {
    await handler(event('Create'));
    secrets.resetHistory();
    dynamo.resetHistory();
    vi.mocked(ensureBootstrapAdmin).mockClear();

    const response = await handler(event('Delete'));

    expect(response).toEqual({ PhysicalResourceId: PHYSICAL_RESOURCE_ID });
    expect(secrets.calls()).toHaveLength(0);
    expect(dynamo.calls()).toHaveLength(0);
    expect(ensureBootstrapAdmin).not.toHaveBeenCalled();
    expect(userByEmail('ops@example.com')).toBeDefined();
  });

  it('throws, so CloudFormation sees FAILED, when the table write fails, without the password in the message', async () => {
    dynamo.on(TransactWriteCommand).rejects(Object.assign(new Error(`AccessDenied while writing ${PASSWORD}`), { name: 'AccessDeniedException' }));

    const failure = await handler(event('Create')).then(
      () => undefined,
      (error: Error) => error,
    );

    expect(failure).toBeInstanceOf(Error);
    expect(failure!.message).toMatch(/^Bootstrap admin ops@example\.com failed: AccessDeniedException: AccessDenied while writing \[REDACTED\]$/);
    expect(failure!.message).not.toContain(PASSWORD);
    expect(failure!.stack ?? '').not.toContain(PASSWORD);
  });

  it('throws when the secret cannot be read, naming the cause', async () => {
    secrets.on(GetSecretValueCommand).rejects(Object.assign(new Error('Secrets Manager can not find the specified secret.'), { name: 'ResourceNotFoundException' }));

    await expect(handler(event('Create'))).rejects.toThrow(/Bootstrap admin ops@example\.com failed: ResourceNotFoundException/);
    expect(ensureBootstrapAdmin).not.toHaveBeenCalled();
  });

  it('throws on a password shorter than 8 characters or a JSON secret without one, not saying what it is', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'short' });
    const short = await handler(event('Create')).catch((error: Error) => error);
    expect((short as Error).message).toMatch(/shorter than 8 characters/);
    expect((short as Error).message).not.toContain('short"');

    secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pass: PASSWORD }) });
    const json = await handler(event('Create')).catch((error: Error) => error);
    expect((json as Error).message).toMatch(/without a string field 'password'/);
    expect((json as Error).message).not.toContain(PASSWORD);
    expect(ensureBootstrapAdmin).not.toHaveBeenCalled();
  });

  it('throws when the resource has no secret ARN', async () => {
    await expect(handler(event('Create', { AdminPasswordSecretArn: undefined }))).rejects.toThrow(/AdminPasswordSecretArn is missing/);
  });

  it('never logs the password, even at debug level', async () => {
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    const writes: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void writes.push(args.map(String).join(' '))),
    );
    const capture = (chunk: unknown): boolean => (writes.push(String(chunk)), true);
    const streams = [vi.spyOn(process.stdout, 'write').mockImplementation(capture), vi.spyOn(process.stderr, 'write').mockImplementation(capture)];
    try {
      await handler(event('Create'));
      dynamo.on(TransactWriteCommand).rejects(new Error(`boom ${PASSWORD}`));
      await handler(event('Create', { AdminEmail: 'second@example.com' })).catch(() => undefined);
    } finally {
      for (const spy of spies) spy.mockRestore();
      for (const stream of streams) stream.mockRestore();
      logger.setLogLevel(level);
    }
    // The logs were captured (both outcomes), and the password is in none of them.
    expect(writes.join('\n')).toContain('bootstrap admin ensured');
    expect(writes.join('\n')).toContain('Bootstrap admin second@example.com failed');
    expect(writes.join('\n')).not.toContain(PASSWORD);
  });
});

describe('redact', () => {
  it('replaces every occurrence of the password and leaves other messages alone', () => {
    expect(redact('a pw b pw', 'pw')).toBe('a [REDACTED] b [REDACTED]');
    expect(redact('nothing here', undefined)).toBe('nothing here');
  });
});
