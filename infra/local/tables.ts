/** Creates the tables of shared/tables.ts that are missing on the local engine. */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { config } from '../../shared/config.js';
import { tables, type TableDefinition } from '../../shared/tables.js';

export function createTableInput(definition: TableDefinition, name: string) {
  const attributes = new Set<string>([definition.partitionKey, definition.sortKey]);
  for (const index of definition.globalIndexes) attributes.add(index.partitionKey).add(index.sortKey);
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map((a) => ({ AttributeName: a, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: definition.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: definition.sortKey, KeyType: 'RANGE' as const },
    ],
    ...(definition.globalIndexes.length
      ? {
          GlobalSecondaryIndexes: definition.globalIndexes.map((index) => ({
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
              { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
            ],
            Projection: { ProjectionType: 'ALL' as const },
          })),
        }
      : {}),
    ...(definition.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const } } : {}),
  };
}

async function exists(client: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (error) {
    if (error instanceof ResourceNotFoundException || (error as Error).name === 'ResourceNotFoundException') return false;
    throw error;
  }
}

export async function ensureTables(client: DynamoDBClient): Promise<string[]> {
  const created: string[] = [];
  for (const definition of tables) {
    const name = config().tables[definition.id];
    if (await exists(client, name)) continue;
    await client.send(new CreateTableCommand(createTableInput(definition, name)));
    if (definition.ttlAttribute) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: definition.ttlAttribute, Enabled: true } }));
    }
    created.push(name);
  }
  return created;
}
