/**
 * On the local runtime every request runs in this one process: when it starts, no request of an
 * earlier run (one killed mid-request) can still be running, so the Idempotency-Key locks taken
 * before are released at once and a retry proceeds instead of waiting for the lock's deadline.
 * Only when this process owns its engine: another server may share an engine given by
 * DYNAMODB_ENDPOINT.
 */
import { DeleteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { config } from '../../shared/config.js';

/** Deletes every in-progress idempotency lock taken before `startedAt` (ms); returns how many. */
export async function releaseEarlierLocks(client: DynamoDBClient, startedAt: number): Promise<number> {
  const doc = DynamoDBDocumentClient.from(client);
  const table = config().tables.limits;
  let released = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(pk, :idem) AND #status = :inProgress AND lockedAt < :startedAt',
        ProjectionExpression: 'pk, sk, lockId',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':idem': 'IDEMP#', ':inProgress': 'in_progress', ':startedAt': startedAt },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      try {
        await doc.send(
          new DeleteCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'lockId = :lockId', ExpressionAttributeValues: { ':lockId': item.lockId } }),
        );
        released += 1;
      } catch (error) {
        // Completed or retaken meanwhile: not ours to release.
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return released;
}
