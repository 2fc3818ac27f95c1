/**
 * A user's status: `disabled` (set by a tenant admin, PATCH /api/v1/users/{id} {status}) refuses
 * every credential of the user: the password, their sessions (ended when disabled), their API keys
 * and the tokens of an identity provider, however valid. Stored as `status` on the user item only
 * while disabled (docs/CONTRIBUTING.md, identity table).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName, userKey } from '../data/index.js';
import { NotFoundError } from '../errors.js';

export type UserStatus = 'active' | 'disabled';

export function isDisabled(user: object): boolean {
  return (user as { status?: unknown }).status === 'disabled';
}

export function statusOf(user: object): UserStatus {
  return isDisabled(user) ? 'disabled' : 'active';
}

export async function setUserStatus(userId: string, status: UserStatus): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName('identity'),
        Key: userKey(userId),
        UpdateExpression: status === 'disabled' ? 'SET #s = :s, updatedAt = :now' : 'REMOVE #s SET updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':now': new Date().toISOString(), ...(status === 'disabled' ? { ':s': status } : {}) },
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') throw new NotFoundError('User not found');
    throw error;
  }
}
