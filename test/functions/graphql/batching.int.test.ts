/**
 * Related records load in batches: the assignees of a page of tasks come from ONE BatchGetItem
 * on the identity table, however many tasks and assignees there are. The GraphQL handler runs in
 * process against the test run's DynamoDB Local, its SDK commands counted.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { db, tableName } from '../../../shared/data/client.js';
import { lambdaContext, parsed, proxyEvent } from '../../support/events.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
resetConfig();
const { handler } = await import('../../../functions/graphql/handler.js');

let tenant: TestTenant;
let users: TestUser[];

beforeAll(async () => {
  tenant = await newTenant();
  users = await Promise.all([newUser(tenant.admin.cookie), newUser(tenant.admin.cookie), newUser(tenant.admin.cookie)]);
});

afterEach(() => vi.restoreAllMocks());

function gql(query: string, variables?: Record<string, unknown>) {
  const body = JSON.stringify({ query, ...(variables ? { variables } : {}) });
  return handler(proxyEvent({ method: 'POST', path: '/api/v1/graphql', headers: { Cookie: tenant.admin.cookie, 'Content-Type': 'application/json' }, body }), lambdaContext()).then(parsed);
}

describe('GraphQL relation loading', () => {
  it('loads the assignees of 12 tasks with one BatchGetItem', async () => {
    for (let i = 0; i < 12; i++) {
      const response = await gql('mutation($input: CreateTaskInput!) { createTask(input: $input) { id } }', { input: { title: `Batched ${i}`, assigneeId: users[i % 3].id } });
      expect(response.body.errors, JSON.stringify(response.body)).toBeUndefined();
    }
    const client = db();
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    const batches: string[][] = [];
    vi.spyOn(client, 'send').mockImplementation((async (command: { input: any }) => {
      if (command instanceof BatchGetCommand) batches.push(Object.keys(command.input.RequestItems ?? {}));
      return send(command);
    }) as never);

    const response = await gql('{ tasks(limit: 12) { edges { node { title assignee { id name email } } } } }');

    expect(response.status).toBe(200);
    const assignees = response.body.data.tasks.edges.map((e: any) => e.node.assignee.id);
    expect(new Set(assignees)).toEqual(new Set(users.map((u) => u.id)));
    expect(batches).toEqual([[tableName('identity')]]);
  });
});
