/**
 * The DynamoDB clients, created once per cold start. Locally DYNAMODB_ENDPOINT points at
 * DynamoDB Local (dummy credentials); on AWS the SDK's default chain applies. Every call is
 * accounted for per request (call-accounting.ts).
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { dynamoClientOptions } from './client-options.js';
import { accountCalls } from './call-accounting.js';

export { onConsumedCapacity, operationOf, unitsOf, type CapacityReport } from './call-accounting.js';

let documentClient: DynamoDBDocumentClient | undefined;
let singleAttemptClient: DynamoDBDocumentClient | undefined;

/** A DynamoDB client of this app: its options (`overrides` on top), without the SDK's log, every call accounted for. */
export function createDynamoClient(overrides: Partial<DynamoDBClientConfig> = {}): DynamoDBClient {
  const client = new DynamoDBClient({ ...dynamoClientOptions(), ...overrides });
  withoutSdkLog(client);
  accountCalls(client);
  return client;
}

/**
 * The SDK's logger middleware builds a copy of every request and answer with sensitive members
 * masked, then hands it to its logger, a no-op unless one is configured: about 4 % of the CPU of
 * a LIST for nothing. This app logs its own calls (call-accounting.ts), so the middleware goes.
 */
function withoutSdkLog(client: DynamoDBClient): void {
  client.middlewareStack.remove('loggerMiddleware');
}

export function db(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(createDynamoClient(), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return documentClient;
}

/**
 * A client that sends each request once (no SDK retries): for callers that retry themselves
 * and must change the request between attempts (transactions restamp their change events,
 * shared/data/transact.ts sendTransaction).
 */
export function dbOnce(): DynamoDBDocumentClient {
  if (!singleAttemptClient) {
    singleAttemptClient = DynamoDBDocumentClient.from(createDynamoClient({ maxAttempts: 1 }), { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
  }
  return singleAttemptClient;
}

export function tableName(id: 'records' | 'events' | 'history' | 'identity' | 'limits'): string {
  return config().tables[id];
}
