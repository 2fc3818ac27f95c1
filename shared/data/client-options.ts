/**
 * How this app's DynamoDB clients are configured: locally DYNAMODB_ENDPOINT (or
 * AWS_ENDPOINT_URL_DYNAMODB) points at DynamoDB Local with dummy credentials; on AWS the SDK's
 * default chain applies. Kept apart from the SDK so that a function may load the SDK lazily.
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { config } from '../config.js';

export function dynamoClientOptions(): DynamoDBClientConfig {
  const { dynamoEndpoint, region } = config();
  return {
    region,
    maxAttempts: 3,
    ...(dynamoEndpoint ? { endpoint: dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  };
}
