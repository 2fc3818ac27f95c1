/** The DynamoDB client's options (shared/data/client-options.ts): its socket pool. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { dynamoClientOptions } from '../../../shared/data/client-options.js';
import { LOCAL_DYNAMODB_SOCKETS } from '../../../infra/local/server.js';

const saved = process.env.DYNAMODB_MAX_SOCKETS;

afterEach(() => {
  if (saved === undefined) delete process.env.DYNAMODB_MAX_SOCKETS;
  else process.env.DYNAMODB_MAX_SOCKETS = saved;
  resetConfig();
});

interface Agent {
  maxSockets: number;
  keepAlive: boolean;
}

/** The agents the SDK's request handler built for a client (the http one, DynamoDB Local's, built on demand). */
async function agentsOf(client: DynamoDBClient): Promise<{ httpAgent: Agent; httpsAgent: Agent }> {
  const handler = client.config.requestHandler as unknown as {
    configProvider: Promise<{ httpAgentProvider: () => Promise<Agent>; httpsAgent: Agent }>;
  };
  const resolved = await handler.configProvider;
  return { httpAgent: await resolved.httpAgentProvider(), httpsAgent: resolved.httpsAgent };
}

describe('dynamoClientOptions', () => {
  it("leaves the SDK's own pool when DYNAMODB_MAX_SOCKETS is unset (a Lambda container serves one request at a time)", async () => {
    delete process.env.DYNAMODB_MAX_SOCKETS;
    resetConfig();

    const options = dynamoClientOptions();
    const { httpAgent, httpsAgent } = await agentsOf(new DynamoDBClient(options));

    expect(options.requestHandler).toBeUndefined();
    expect(httpAgent.maxSockets).toBe(50);
    expect(httpsAgent.maxSockets).toBe(50);
  });

  it('sizes the pool of both agents to DYNAMODB_MAX_SOCKETS, keeping connections alive', async () => {
    process.env.DYNAMODB_MAX_SOCKETS = String(LOCAL_DYNAMODB_SOCKETS);
    resetConfig();

    const { httpAgent, httpsAgent } = await agentsOf(new DynamoDBClient(dynamoClientOptions()));

    expect(httpAgent.maxSockets).toBe(LOCAL_DYNAMODB_SOCKETS);
    expect(httpsAgent.maxSockets).toBe(LOCAL_DYNAMODB_SOCKETS);
    expect(httpAgent.keepAlive).toBe(true);
  });
});
