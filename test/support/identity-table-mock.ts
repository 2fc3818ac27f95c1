/**
 * A tiny in-memory identity table behind aws-sdk-client-mock, for unit tests of code that only
 * needs Get, Put (conditional), TransactWrite (puts) and Update on items keyed by pk.
 */
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsStub } from 'aws-sdk-client-mock';

export type Items = Map<string, Record<string, any>>;

function conditionFailure(name: string): Error {
  return Object.assign(new Error(name), { name });
}

/** Resets `dynamo` and answers it from a new map, which is returned. */
export function answerFromMap(doc: AwsStub<any, any, DynamoDBDocumentClient['config']>): Items {
  const items: Items = new Map();
  doc.reset();
  doc.on(GetCommand).callsFake((input) => ({ Item: items.get(input.Key.pk) }));
  doc.on(PutCommand).callsFake((input) => {
    if (input.ConditionExpression && items.has(input.Item.pk)) throw conditionFailure('ConditionalCheckFailedException');
    items.set(input.Item.pk, input.Item);
    return {};
  });
  doc.on(TransactWriteCommand).callsFake((input) => {
    const puts = input.TransactItems.map((t: any) => t.Put.Item);
    if (puts.some((item: any) => items.has(item.pk))) throw conditionFailure('TransactionCanceledException');
    for (const item of puts) items.set(item.pk, item);
    return {};
  });
  doc.on(UpdateCommand).callsFake((input) => {
    const item = items.get(input.Key.pk);
    if (!item) throw conditionFailure('ConditionalCheckFailedException');
    for (const [placeholder, name] of Object.entries<string>(input.ExpressionAttributeNames)) {
      item[name] = input.ExpressionAttributeValues[placeholder.replace('#f', ':v')];
    }
    return { Attributes: item };
  });
  return items;
}
