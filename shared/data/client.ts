/**
 * The DynamoDB clients, created once per cold start. Locally DYNAMODB_ENDPOINT points at
 * DynamoDB Local (dummy credentials); on AWS the SDK's default chain applies.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { dynamoClientOptions } from './client-options.js';

let documentClient: DynamoDBDocumentClient | undefined;

export function createDynamoClient(): DynamoDBClient {
  return new DynamoDBClient(dynamoClientOptions());
}

export function db(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(createDynamoClient(), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return documentClient;
}

export function tableName(id: 'records' | 'events' | 'identity' | 'limits'): string {
  return config().tables[id];
}
