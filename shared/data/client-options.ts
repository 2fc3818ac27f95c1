/**
 * How this app's DynamoDB clients are configured: locally DYNAMODB_ENDPOINT (or
 * AWS_ENDPOINT_URL_DYNAMODB) points at DynamoDB Local with dummy credentials; on AWS the SDK's
 * default chain applies. Kept apart from the SDK so that a function may load the SDK lazily.
 *
 * The socket pool: a Lambda container serves one request at a time, and the SDK's 50 sockets
 * are plenty (DYNAMODB_MAX_SOCKETS is not set there). The local runtime serves every request in
 * one process and sets a larger pool (infra/local/server.ts): with the SDK's 50, 16 clients
 * queued DynamoDB calls inside the process.
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { config } from '../config.js';

export function dynamoClientOptions(): DynamoDBClientConfig {
  const { dynamoEndpoint, dynamoMaxSockets, region } = config();
  return {
    region,
    maxAttempts: 3,
    ...(dynamoEndpoint ? { endpoint: dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    ...(dynamoMaxSockets ? { requestHandler: { httpAgent: pool(dynamoMaxSockets), httpsAgent: pool(dynamoMaxSockets) } } : {}),
  };
}

/** The options of the SDK's own agent (keep-alive), with another number of sockets. */
function pool(maxSockets: number): { keepAlive: true; maxSockets: number } {
  return { keepAlive: true, maxSockets };
}
