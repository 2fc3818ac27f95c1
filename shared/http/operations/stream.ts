/**
 * The stream family's operations: GET /api/v1/stream/tasks (static, wins over the template) and
 * GET /api/v1/stream/{entity}, answered as text/event-stream (shared/stream/session.ts). Scope
 * `<entity>:read` (the route's), plus the definition's read permissions; an unregistered entity
 * answers 404 ENTITY_NOT_FOUND. The rate limit counts the connection once (the stack's before).
 *
 * Where a stream starts: after `Last-Event-ID` (header; or the `lastEventId` query parameter for
 * EventSource polyfills that cannot set headers) when given, else at the moment it opens. An id
 * older than the 24-hour retention gets `event: reset` and the stream continues from now.
 */
import { config } from '../../config.js';
import { isAdmin, requireCaller, requirePermission } from '../../entities/rules.js';
import { BadRequestError, EntityNotFoundError } from '../../errors.js';
import { findEntity } from '../../registry/index.js';
import { acquireLease, beyondRetention, EventStream, isPosition, loadHandoff, positionAt, positionTime, saveHandoff, STREAM_HEADERS, type HandoffOwner } from '../../stream/index.js';
import type { AuthorizeOptions } from '../authorize.js';
import type { ApiLambdaContext, ApiRequest, FamilyOperations, Reply } from '../types.js';

export const STREAM_PATHS = {
  tasks: '/api/v1/stream/tasks',
  entity: '/api/v1/stream/{entity}',
} as const;

/** The stream ends this long before the function's own timeout. */
export const END_MARGIN_MS = 10_000;
/** A Last-Event-ID this far ahead of the clock is not one we sent. */
const MAX_FUTURE_MS = 60_000;

export const streamAuthorizeOptions: AuthorizeOptions = {
  scopeApplies: (req) => req.route.path !== STREAM_PATHS.entity || findEntity(req.params.entity ?? '') !== undefined,
};

export interface StreamStart {
  start: string;
  reset: boolean;
  /** The start is the client's Last-Event-ID (the previous connection's hand-off applies). */
  resumed: boolean;
}

/** Where the stream starts, from Last-Event-ID (header or query parameter). */
export function streamStart(req: Pick<ApiRequest, 'headers' | 'query'>, now: number): StreamStart {
  const lastId = req.headers['last-event-id'] || req.query.lastEventId;
  // A stream without Last-Event-ID carries what commits after it opens: events already stamped
  // when it opens are taken as there (the first read marks them seen), later ones are sent.
  const fromNow = positionAt(now);
  if (!lastId) return { start: fromNow, reset: false, resumed: false };
  if (!isPosition(lastId) || positionTime(lastId) > now + MAX_FUTURE_MS) {
    throw new BadRequestError('Last-Event-ID is not an id this stream sent', { lastEventId: 'must be the id of a message of this stream' });
  }
  if (beyondRetention(lastId, now)) return { start: fromNow, reset: true, resumed: false };
  return { start: lastId, reset: false, resumed: true };
}

/** How long the stream may run: the configured maximum, cut to end before the function times out. */
export function streamDuration(maxDurationMs: number, context: Pick<ApiLambdaContext, 'getRemainingTimeInMillis'> | undefined): number {
  const remaining = context?.getRemainingTimeInMillis?.();
  const limit = remaining === undefined ? maxDurationMs : Math.min(maxDurationMs, remaining - END_MARGIN_MS);
  return Math.max(1000, limit);
}

async function openStream(req: ApiRequest, context?: ApiLambdaContext): Promise<Reply> {
  const slug = req.route.path === STREAM_PATHS.tasks ? 'tasks' : (req.params.entity ?? '');
  const entity = findEntity(slug);
  if (!entity) throw new EntityNotFoundError(slug);
  const auth = requireCaller(req.auth);
  requirePermission(entity, 'read', auth);
  const settings = config().stream;
  const { start, reset, resumed } = streamStart(req, Date.now());
  const lease = await acquireLease(auth.user.id, settings.maxPerUser);
  // The hand-off between this client's connections (handoff.ts): per tenant, user and entity.
  const owner: HandoffOwner = { tenantId: auth.tenantId, userId: auth.user.id, table: entity.tableName };
  const stream = new EventStream({
    entity,
    viewer: { tenantId: auth.tenantId, userId: auth.user.id, admin: isAdmin(auth) },
    start,
    reset,
    lease,
    resumed,
    handoff: { load: (lastId) => loadHandoff(owner, lastId), save: (lastId, handoff) => saveHandoff(owner, lastId, handoff) },
    pollMs: settings.pollMs,
    heartbeatMs: settings.heartbeatMs,
    retryMs: settings.retryMs,
    settleMs: settings.settleMs,
    lookbackMs: settings.lookbackMs,
    durationMs: streamDuration(settings.maxDurationMs, context),
  });
  return { status: 200, headers: { ...STREAM_HEADERS }, stream };
}

export const streamOperations: FamilyOperations<'stream'> = {
  streamTasks: openStream,
  streamEntity: openStream,
};
