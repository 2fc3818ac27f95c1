/**
 * The rate-limit counters in the `limits` table (the middleware that counts requests with them is
 * shared/http/rate-limit.ts; its comment tells the scheme): one item per subject and window,
 * pk `RL#<subject>`, sk `W#<window seconds>#<window start, 12 digits>`, attribute `n`, taken in
 * leased blocks of tokens. Also what a key's usage reads back (`keyRequestsLast24h`).
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { db, tableName } from './client.js';

export const DAY_SECONDS = 24 * 3600;

export interface CounterSpec {
  /** `RL#` + this is the item's pk. */
  subject: string;
  limit: number;
  windowSeconds: number;
  /** Seconds the item outlives its window (usage history of keys). */
  keepSeconds: number;
}

export interface CounterState {
  limit: number;
  count: number;
  remaining: number;
  /** Unix seconds of the window's end. */
  reset: number;
}

export function windowStart(nowSeconds: number, windowSeconds: number): number {
  return Math.floor(nowSeconds / windowSeconds) * windowSeconds;
}

export function counterKey(subject: string, windowSeconds: number, start: number): { pk: string; sk: string } {
  return { pk: `RL#${subject}`, sk: `W#${windowSeconds}#${String(start).padStart(12, '0')}` };
}

export function apiKeySubject(keyId: string): string {
  return `k:${keyId}`;
}

/** Tokens this container holds for one counter's window. */
interface Lease {
  subject: string;
  limit: number;
  reset: number;
  /** Tokens this container took for the window, in total. */
  leased: number;
  /** Of those, tokens spent on admitted requests. */
  used: number;
  /** `n` of the item as last seen (tokens taken by every container). */
  counted: number;
  /** The window has no token left. */
  exhausted: boolean;
  pending?: Promise<void>;
}

const leases = new Map<string, Lease>();

/** A block is at most this fraction (1/n) of the tokens the window has left. */
export const LEASE_SHARE = 20;

/**
 * Tokens taken per update (1 = a write per request): a twentieth of what the window has left as
 * last seen (`counted` taken by every container), at most RATE_LIMIT_LEASE_BLOCK, at least 1. So
 * the tokens a container can strand (take and never spend) are at most 5 % of the window, and
 * fewer as the window runs out: near the limit every token is taken on its own.
 */
export function leaseBlock(limit: number, counted = 0): number {
  return Math.max(1, Math.min(config().rateLimits.leaseBlock, Math.floor((limit - counted) / LEASE_SHARE)));
}

/** Forgets every lease (tests; a new container). */
export function clearLeases(): void {
  leases.clear();
}

function leaseOf(spec: CounterSpec, start: number, nowSeconds: number): Lease {
  const key = `${spec.subject}|${spec.windowSeconds}|${start}`;
  let lease = leases.get(key);
  if (!lease) {
    for (const [k, old] of leases) if (old.reset <= nowSeconds) leases.delete(k);
    lease = { subject: spec.subject, limit: spec.limit, reset: start + spec.windowSeconds, leased: 0, used: 0, counted: 0, exhausted: false };
    leases.set(key, lease);
  }
  return lease;
}

function isConditionFailure(error: unknown): error is { name: string; Item?: Record<string, unknown> } {
  return (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** `n` of the item returned with a failed condition (ALL_OLD, in attribute-value form). */
function countOfFailure(error: { Item?: Record<string, unknown> }): number {
  const n = error.Item?.n as { N?: string } | number | undefined;
  return Number(typeof n === 'object' ? n?.N ?? 0 : n ?? 0);
}

/**
 * Takes up to `want` tokens with ONE conditional ADD (never past the limit); when fewer are left,
 * takes exactly what is left (one more update); none left → the lease is exhausted.
 */
async function acquire(lease: Lease, spec: CounterSpec, start: number, want: number): Promise<void> {
  let take = Math.max(1, Math.min(want, spec.limit));
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const { Attributes } = await db().send(
        new UpdateCommand({
          TableName: tableName('limits'),
          Key: counterKey(spec.subject, spec.windowSeconds, start),
          UpdateExpression: 'ADD #n :k SET expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(#n) OR #n <= :max',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':k': take, ':max': spec.limit - take, ':exp': lease.reset + spec.keepSeconds },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      lease.leased += take;
      lease.counted = Number(Attributes?.n ?? take);
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = countOfFailure(error);
      lease.counted = Math.max(lease.counted, current);
      if (current >= spec.limit) {
        lease.exhausted = true;
        return;
      }
      take = spec.limit - current;
    }
  }
  // Other containers kept taking the rest first: the window is as good as spent.
  lease.exhausted = true;
}

function stateOf(lease: Lease, admitted: boolean): CounterState {
  if (!admitted) return { limit: lease.limit, count: lease.limit + 1, remaining: 0, reset: lease.reset };
  // Tokens other containers hold unspent count as spent: exact when this container is the only one.
  const count = Math.min(lease.limit, lease.counted - (lease.leased - lease.used));
  return { limit: lease.limit, count, remaining: Math.max(0, lease.limit - count), reset: lease.reset };
}

/** Makes sure this container holds `count` unspent tokens of the counter (one update when it does not). */
export async function holdTokens(spec: CounterSpec, nowSeconds: number, count: number): Promise<Lease> {
  const start = windowStart(nowSeconds, spec.windowSeconds);
  const lease = leaseOf(spec, start, nowSeconds);
  while (lease.leased - lease.used < count && !lease.exhausted) {
    if (lease.pending) {
      await lease.pending;
      continue;
    }
    const want = Math.max(leaseBlock(spec.limit, lease.counted), count - (lease.leased - lease.used));
    lease.pending = acquire(lease, spec, start, want).finally(() => {
      lease.pending = undefined;
    });
    await lease.pending;
  }
  return lease;
}

/** Admits one request on a counter: a token from this container's lease, leasing a block when none is left. */
export async function increment(spec: CounterSpec, nowSeconds: number): Promise<CounterState> {
  for (;;) {
    const lease = await holdTokens(spec, nowSeconds, 1);
    // Checked and spent without an await between: concurrent requests woken by the same lease
    // update must not all spend its one token.
    if (lease.leased - lease.used >= 1) {
      lease.used += 1;
      return stateOf(lease, true);
    }
    if (lease.exhausted) return stateOf(lease, false);
  }
}

/** The counter the headers report: an exceeded one, else the one with the least left. */
export function tightest(states: CounterState[]): CounterState {
  return states.reduce((a, b) => {
    const aOver = a.count > a.limit;
    const bOver = b.count > b.limit;
    if (aOver !== bOver) return aOver ? a : b;
    if (aOver) return b.reset > a.reset ? b : a;
    return b.remaining < a.remaining ? b : a;
  });
}

/**
 * A key's requests in the windows that started within the last 24 hours (its counters are kept
 * that long): one Query of at most 24 items for hourly windows.
 */
export async function keyRequestsLast24h(keyId: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
  const windowSeconds = config().rateLimits.windowSeconds;
  const from = counterKey(apiKeySubject(keyId), windowSeconds, Math.max(0, nowSeconds - DAY_SECONDS + 1));
  const to = counterKey(apiKeySubject(keyId), windowSeconds, nowSeconds);
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName('limits'),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':pk': from.pk, ':from': from.sk, ':to': to.sk },
        ProjectionExpression: '#n',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) total += Number(item.n ?? 0);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  // Tokens this container leased but has not spent were not requests (other containers' are not known here).
  const subject = apiKeySubject(keyId);
  for (const lease of leases.values()) if (lease.subject === subject) total -= lease.leased - lease.used;
  return Math.max(0, total);
}
