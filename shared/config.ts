/**
 * Deployment configuration, read from the environment once per cold start.
 * Every variable is listed in docs/configuration.md; defaults are the values the API is specified with.
 */
import pkg from '../package.json' with { type: 'json' };

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

function json<T>(name: string, fallback: T): T {
  const raw = process.env[name];
  if (!raw) return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new Error(`${name} must be valid JSON`);
  }
}

function list(name: string): string[] {
  return (process.env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

export interface DeprecationConfig {
  /** HTTP date of the sunset. */
  sunset?: string;
  /** Path of the migration guide, sent as Link rel=deprecation. */
  link?: string;
  /** Optional text put into the body's warning field. */
  warning?: string;
}

export interface Config {
  version: string;
  apiVersions: string[];
  deprecations: Record<string, DeprecationConfig>;
  tables: { records: string; events: string; history: string; identity: string; limits: string; uploads: string; webhooks: string };
  dynamoEndpoint?: string;
  /** Sockets each DynamoDB client may open (DYNAMODB_MAX_SOCKETS); unset, the SDK's 50. */
  dynamoMaxSockets?: number;
  /** S3 (or a compatible server) for uploads: the bucket, and another endpoint than AWS's. */
  uploads: { bucket: string; s3Endpoint?: string };
  region: string;
  allowedOrigins: string[];
  sessionTtlSeconds: number;
  /** How long a container may serve a verified session (and its user's role) from its cache. */
  sessionCacheSeconds: number;
  rateLimits: {
    apiKeyPerHour: number;
    sessionPerHour: number;
    /** Sessions of admins (a tenant's admins and the platform operator): the console's users. */
    adminSessionPerHour: number;
    anonymousPerHour: number;
    /** Length of a fixed rate-limit window; the limits above apply per window (3600 by default). */
    windowSeconds: number;
    /** Most tokens a container leases per counter update (1: one write per request). */
    leaseBlock: number;
  };
  /** How long a container may serve API key data from its cache. */
  apiKeyCacheSeconds: number;
  metadataDefaults: Record<string, unknown>;
  secureCookies: boolean;
  /** X-Request-Cost on every response (and ReturnConsumedCapacity on every DynamoDB call). */
  requestCostHeader: boolean;
  /** One JSON line per request (caller type, status, latency): shared/http/request-metrics.ts. */
  requestLog: boolean;
  /** Most records an aggregate may scan (GET /api/v1/{entity}/aggregate); more is 400 AGGREGATE_TOO_LARGE. */
  aggregateScanLimit: number;
  /** The SSE stream (shared/stream/*). */
  stream: {
    /** How often an open stream queries the events table. */
    pollMs: number;
    /** How often a `: ping` comment is sent. */
    heartbeatMs: number;
    /** A stream ends after this long (the client reconnects with its last id). */
    maxDurationMs: number;
    /** Open streams per user; one more answers 429. */
    maxPerUser: number;
    /** The `retry:` hint sent to clients. */
    retryMs: number;
    /** How old an event must be before the stream's position (its resume point) moves past it. */
    settleMs: number;
    /** How far behind its position a stream re-reads for events that committed late. */
    lookbackMs: number;
  };
  webhooks: WebhookConfig;
  /** The write-shards controller of auto entities (shared/migrations/shard-control.ts; docs/capacity.md). */
  writeShards: WriteShardsConfig;
  /** Identity providers whose JWTs are accepted (AUTH_OIDC_ISSUERS; docs/authentication.md). */
  oidc: OidcConfig;
}

export interface OidcConfig {
  /** AUTH_OIDC_ISSUERS as parsed JSON; its fields are checked by shared/auth/oidc-config.ts, loaded only where tokens are. */
  issuers: unknown;
  /** After a JWKS fetch, how long before a token with an unknown `kid` may fetch it again. */
  jwksCooldownSeconds: number;
}

export interface WriteShardsConfig {
  /** A split starts when the busiest listing key's writes stay at or above this percent of the key's ceiling (250 writes/s)… */
  splitAtPercent: number;
  /** …for this long. */
  splitAfterSeconds: number;
  /** A merge (halving) starts when the busiest key's writes stay below this percent of the ceiling… */
  mergeBelowPercent: number;
  /** …for this long, with no change of the shard count meanwhile. */
  mergeAfterSeconds: number;
  /** Length of the windows the stream consumer counts each shard's writes in. */
  windowSeconds: number;
  /** How often a process runs the controller (the merge check: at most every MERGE_CHECK_SECONDS). */
  checkSeconds: number;
  mergeCheckSeconds: number;
}

export interface WebhookConfig {
  /** ALLOW_INSECURE_WEBHOOKS=1: http:// targets and private addresses (local testing only). */
  allowInsecure: boolean;
  /** Seconds to wait before each retry; after the last, the delivery fails (dead-letter queue). */
  retryScheduleSeconds: number[];
  /** A delivery attempt that has no answer within this time fails. */
  timeoutMs: number;
  /** A webhook whose deliveries have all failed for this long is disabled. */
  disableAfterSeconds: number;
  /** The SQS queue of deliveries (AWS). */
  queueUrl?: string;
  /** Inbound provider receivers: provider → secret. */
  inboundSecrets: Record<string, string>;
  /** Requests (delivery log writes of 25, queue batches of 10) the fan-out of one stream batch has in flight at once. */
  fanoutConcurrency: number;
}

function seconds(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (!values.length || values.some((v) => !Number.isFinite(v) || v < 0)) throw new Error(`${name} must be a comma-separated list of seconds, got '${raw}'`);
  return values;
}

function load(): Config {
  return {
    version: pkg.version,
    apiVersions: ['v1'],
    // e.g. {"v1": {"sunset": "Sat, 01 May 2027 00:00:00 GMT", "link": "/docs/migrate-v2"}}
    deprecations: json<Record<string, DeprecationConfig>>('API_DEPRECATIONS', {}),
    tables: {
      records: process.env.TABLE_RECORDS ?? 'Records',
      events: process.env.TABLE_EVENTS ?? 'Events',
      history: process.env.TABLE_HISTORY ?? 'History',
      identity: process.env.TABLE_IDENTITY ?? 'Identity',
      limits: process.env.TABLE_LIMITS ?? 'Limits',
      uploads: process.env.TABLE_UPLOADS ?? 'Uploads',
      webhooks: process.env.TABLE_WEBHOOKS ?? 'Webhooks',
    },
    uploads: {
      bucket: process.env.UPLOAD_BUCKET || 'uploads',
      s3Endpoint: process.env.S3_ENDPOINT || process.env.AWS_ENDPOINT_URL_S3 || undefined,
    },
    dynamoEndpoint: process.env.DYNAMODB_ENDPOINT || process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined,
    dynamoMaxSockets: int('DYNAMODB_MAX_SOCKETS', 0) || undefined,
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    allowedOrigins: list('ALLOWED_ORIGINS'),
    sessionTtlSeconds: int('SESSION_TTL_SECONDS', 12 * 3600),
    sessionCacheSeconds: int('SESSION_CACHE_SECONDS', 60),
    rateLimits: {
      apiKeyPerHour: int('RATE_LIMIT_API_KEY_PER_HOUR', 1000),
      sessionPerHour: int('RATE_LIMIT_SESSION_PER_HOUR', 100),
      adminSessionPerHour: int('RATE_LIMIT_ADMIN_SESSION_PER_HOUR', 5000),
      anonymousPerHour: int('RATE_LIMIT_ANONYMOUS_PER_HOUR', 300),
      windowSeconds: Math.max(1, int('RATE_LIMIT_WINDOW_SECONDS', 3600)),
      leaseBlock: Math.max(1, int('RATE_LIMIT_LEASE_BLOCK', 10)),
    },
    apiKeyCacheSeconds: int('API_KEY_CACHE_SECONDS', 300),
    metadataDefaults: json<Record<string, unknown>>('METADATA_DEFAULTS', {}),
    secureCookies: process.env.SECURE_COOKIES === '1',
    requestCostHeader: !['0', 'false', 'off'].includes((process.env.REQUEST_COST_HEADER ?? '').toLowerCase()),
    requestLog: ['1', 'true', 'on'].includes((process.env.REQUEST_LOG ?? '').toLowerCase()),
    aggregateScanLimit: Math.max(1, int('AGGREGATE_SCAN_LIMIT', 100_000)),
    stream: {
      pollMs: Math.max(50, int('STREAM_POLL_MS', 500)),
      heartbeatMs: Math.max(100, int('STREAM_HEARTBEAT_MS', 15_000)),
      maxDurationMs: Math.max(1000, int('STREAM_MAX_DURATION_MS', 14 * 60_000)),
      maxPerUser: Math.max(1, int('STREAM_MAX_PER_USER', 5)),
      retryMs: int('STREAM_RETRY_MS', 3000),
      settleMs: Math.max(0, int('STREAM_SETTLE_MS', 500)),
      lookbackMs: Math.max(1000, int('STREAM_LOOKBACK_MS', 15_000)),
    },
    webhooks: {
      allowInsecure: process.env.ALLOW_INSECURE_WEBHOOKS === '1',
      // Svix's schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h (SQS allows at most 12 h of visibility).
      retryScheduleSeconds: seconds('WEBHOOK_RETRY_SCHEDULE', [5, 300, 1800, 7200, 18000, 36000]),
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000),
      disableAfterSeconds: int('WEBHOOK_DISABLE_AFTER_SECONDS', 5 * 24 * 3600),
      queueUrl: process.env.WEBHOOK_QUEUE_URL || undefined,
      inboundSecrets: json<Record<string, string>>('INBOUND_WEBHOOK_SECRETS', {}),
      fanoutConcurrency: Math.max(1, int('WEBHOOK_FANOUT_CONCURRENCY', 16)),
    },
    writeShards: {
      splitAtPercent: Math.max(1, int('SHARDS_SPLIT_AT_PERCENT', 50)),
      splitAfterSeconds: Math.max(1, int('SHARDS_SPLIT_AFTER_SECONDS', 60)),
      mergeBelowPercent: int('SHARDS_MERGE_BELOW_PERCENT', 10),
      mergeAfterSeconds: Math.max(1, int('SHARDS_MERGE_AFTER_SECONDS', 3 * 3600)),
      windowSeconds: Math.max(1, int('SHARDS_WINDOW_SECONDS', 10)),
      checkSeconds: Math.max(1, int('SHARDS_CHECK_SECONDS', 10)),
      mergeCheckSeconds: Math.max(1, int('SHARDS_MERGE_CHECK_SECONDS', 300)),
    },
    oidc: {
      issuers: json<unknown>('AUTH_OIDC_ISSUERS', []),
      jwksCooldownSeconds: int('AUTH_OIDC_JWKS_COOLDOWN_SECONDS', 60),
    },
  };
}

let cached: Config | undefined;

export function config(): Config {
  cached ??= load();
  return cached;
}

/** For tests that change the environment in-process. */
export function resetConfig(): void {
  cached = undefined;
}

/**
 * The hourly limit of a session: a user's (RATE_LIMIT_SESSION_PER_HOUR), or an admin's
 * (RATE_LIMIT_ADMIN_SESSION_PER_HOUR; a tenant's admins and the platform operator). An admin is
 * never held tighter than a user: the higher of the two, and off (0) when either is off.
 */
export function sessionLimit(limits: Pick<Config['rateLimits'], 'sessionPerHour' | 'adminSessionPerHour'>, role: string): number {
  if (role !== 'admin') return limits.sessionPerHour;
  if (limits.sessionPerHour === 0 || limits.adminSessionPerHour === 0) return 0;
  return Math.max(limits.sessionPerHour, limits.adminSessionPerHour);
}
