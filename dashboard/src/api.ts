/**
 * Every call the dashboard makes goes through the project's typed client (packages/client) on
 * the page's own origin, so the browser's session cookie authenticates it. The base is the part
 * of the page's path before /dashboard: '' locally, '/prod' on API Gateway's default URL, a
 * custom domain's base path otherwise.
 *
 * Entities are known only at run time (from the API's description), so their paths are typed as
 * one entity's; the answers are read as generic records.
 */
import { createClient, type ApiClient, type Schemas } from '@entity-record-api/client';
import { signal } from '@preact/signals';
import { sessionStore } from './store.js';

export const basePath = location.pathname.replace(/\/dashboard(\/.*)?$/, '');
export const apiOrigin = `${location.origin}${basePath}`;

export const client: ApiClient = createClient({ baseUrl: apiOrigin, credentials: 'same-origin' });

/** The last answer of the API: what the request panel shows. */
export interface CallInfo {
  method: string;
  url: string;
  status: number;
  requestCost: string | null;
  serverTiming: string | null;
}
export const lastCall = signal<CallInfo | undefined>(undefined);

/**
 * The session's rate-limit window as the last answer told it: the limit, what is left, and when
 * the window resets (on this browser's clock: the server's X-RateLimit-Reset less the server's own
 * time of the answer, so a skewed clock does not matter). Kept for the browser session, so a
 * reload shows it at once.
 */
export interface Budget {
  limit: number;
  remaining: number;
  resetAt: number;
}
export const budget = signal<Budget | undefined>(sessionStore.get<Budget>('budget'));

/** Set by a 429: until when (this browser's clock) the API refuses the session's requests. */
export const limitedUntil = signal<number | undefined>(sessionStore.get<number>('limitedUntil'));

/** How long a call takes here, on average (the time estimates of exports and imports). */
export const callMs = signal(300);

/** What an answer's headers say about the window; called for every answer, fetch or XHR. */
export function noteAnswer(status: number, header: (name: string) => string | null): void {
  const limit = Number(header('X-RateLimit-Limit'));
  const remaining = Number(header('X-RateLimit-Remaining'));
  const reset = Number(header('X-RateLimit-Reset'));
  if (header('X-RateLimit-Limit') !== null && Number.isFinite(limit) && Number.isFinite(remaining) && reset > 0) {
    const serverNow = Date.parse(header('Date') ?? '') || Date.now();
    budget.value = { limit, remaining, resetAt: Date.now() + Math.max(0, reset * 1000 - serverNow) };
    sessionStore.set('budget', budget.value);
  }
  if (status === 429) {
    const seconds = Number(header('Retry-After'));
    const until = Date.now() + (seconds > 0 ? seconds : 60) * 1000;
    // Retry-After is whole seconds: another 429 of the same window keeps the countdown steady.
    if (limitedUntil.value === undefined || Math.abs(until - limitedUntil.value) > 2000) {
      limitedUntil.value = until;
      sessionStore.set('limitedUntil', until);
    }
  } else if (status < 400 && header('X-RateLimit-Limit') !== null && limitedUntil.value !== undefined) {
    // A counted request went through (answers that are never counted, the API's description, say nothing).
    endLimit();
  }
}

/** The window has reset (or an answer got through): the banner goes. */
export function endLimit(): void {
  limitedUntil.value = undefined;
  sessionStore.set('limitedUntil', undefined);
}

/** Set when a call answered 401 (the session ended): the app shows the sign-in page. */
export const sessionExpired = signal(false);

/**
 * Which sign-in each request belongs to. A request sent with a session that has since ended and
 * answered only after the user signed in again (a slow one of a page already left) answers 401,
 * but says nothing about the new session: only a 401 to a request of the current sign-in ends it.
 */
let signInEpoch = 0;
const epochOf = new Map<string, number>();
const startOf = new Map<string, number>();

/** A sign-in or sign-out happened: answers to requests sent before it no longer end the session. */
export function newSignIn(): void {
  signInEpoch += 1;
}

client.use({
  onRequest({ id }) {
    epochOf.set(id, signInEpoch);
    startOf.set(id, performance.now());
    return undefined;
  },
  onError({ id }) {
    epochOf.delete(id);
    startOf.delete(id);
    return undefined;
  },
  onResponse({ request, response, id }) {
    const epoch = epochOf.get(id);
    const started = startOf.get(id);
    epochOf.delete(id);
    startOf.delete(id);
    if (started !== undefined) callMs.value = Math.round(callMs.value * 0.8 + (performance.now() - started) * 0.2);
    lastCall.value = {
      method: request.method,
      url: request.url,
      status: response.status,
      requestCost: response.headers.get('X-Request-Cost'),
      serverTiming: response.headers.get('Server-Timing'),
    };
    noteAnswer(response.status, (name) => response.headers.get(name));
    if (response.status === 401 && epoch === signInEpoch && !request.url.includes('/auth/login')) sessionExpired.value = true;
    return undefined;
  },
});

/** The error envelope of SPEC.md, as a thrown value. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string> = {},
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

interface Envelope {
  success?: boolean;
  error?: string;
  code?: string;
  details?: Record<string, unknown>;
  retryAfter?: number;
}

/** The data of an answer, or an ApiFailure with the API's own error text. */
export async function unwrap<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<{ body: T; response: Response }> {
  let result: { data?: unknown; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (e) {
    throw new ApiFailure(0, 'NETWORK_ERROR', `The API could not be reached (${(e as Error).message})`);
  }
  if (result.response.ok) return { body: result.data as T, response: result.response };
  const env = (result.error ?? {}) as Envelope;
  const details = Object.fromEntries(Object.entries(env.details ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  throw new ApiFailure(
    result.response.status,
    env.code ?? `HTTP_${result.response.status}`,
    env.error ?? `${result.response.status} ${result.response.statusText}`,
    details,
    env.retryAfter,
  );
}

/** The literal path types of one entity: how a run-time entity path goes through the typed client. */
export type CollectionPath = '/api/v1/tasks';
export type RecordPath = '/api/v1/tasks/{id}';
export const collectionPath = (slug: string) => `/api/v1/${slug}` as CollectionPath;
export const recordPath = (slug: string) => `/api/v1/${slug}/{id}` as RecordPath;
/** A record's history (docs/history.md): its revisions, restore, and the entity's trash. */
export const revisionsPath = (slug: string) => `/api/v1/${slug}/{id}/revisions` as '/api/v1/tasks/{id}/revisions';
export const restorePath = (slug: string) => `/api/v1/${slug}/{id}/restore` as '/api/v1/tasks/{id}/restore';
export const trashPath = (slug: string) => `/api/v1/${slug}/deleted` as '/api/v1/tasks/deleted';

export type ApiRecord = Record<string, unknown> & { id: string };

/** The list envelope's pagination, as the API describes it (OpenAPI `Pagination`). */
export type Pagination = Schemas['Pagination'];

/** An entity's aggregate path, typed as one entity's (the explorer's charts). */
export type AggregatePath = '/api/v1/tasks/aggregate';
export const aggregatePath = (slug: string) => `/api/v1/${slug}/aggregate` as AggregatePath;
