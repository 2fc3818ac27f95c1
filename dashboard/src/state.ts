/**
 * What the whole dashboard shares: the signed-in user, the entities of the registry (from the
 * API's OpenAPI document) and their OPTIONS descriptions. Kept for the browser session
 * (sessionStorage), so a reload or a page change costs no request: the session's requests go to
 * records, not to descriptions.
 */
import { signal } from '@preact/signals';
import { ApiFailure, client, collectionPath, sessionExpired, unwrap } from './api.js';
import type { EntityDescription } from './form.js';
import { route } from './router.js';
import { sessionStore } from './store.js';

export interface Me {
  id: string;
  email: string;
  name?: string;
  role: 'admin' | 'user';
  tenantId: string;
}

const load = sessionStore.get;
const save = sessionStore.set;

export function clearStore(): void {
  sessionStore.clear();
}

export const me = signal<Me | null | undefined>(load<Me>('me'));
/** The page a notice belongs to: the route's path (`tasks`, `tasks/tsk_1`, `keys`). */
export const pagePath = (segments: readonly string[] = route.value.segments) => segments.map(encodeURIComponent).join('/');

/** A notice of the page it was given on (or of `path`, the page an action goes to); another page does not show it. */
export const notice = signal<{ text: string; tone: 'success' | 'info'; path: string } | undefined>(undefined);

export function flash(text: string, tone: 'success' | 'info' = 'success', path = pagePath()): void {
  notice.value = { text, tone, path };
}

/** Bumped by Retry: the page is drawn again from scratch, its requests sent again. */
export const pageKey = signal(0);

export function retryPage(): void {
  pageKey.value += 1;
}

/** Who is signed in: from the browser session's store, else GET /users/me (null when no session). */
export async function loadMe(): Promise<void> {
  if (me.value) return;
  try {
    const { body } = await unwrap<{ data: Me }>(client.GET('/api/v1/users/me'));
    setMe(body.data);
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) {
      sessionExpired.value = false;
      me.value = null;
      return;
    }
    throw e;
  }
}

export function setMe(user: Me | null): void {
  if (user) save('me', user);
  else clearStore();
  me.value = user;
}

/** The entity slugs: every /api/v1/{slug} of the OpenAPI document that answers OPTIONS (a description). */
export function entitySlugs(document: { paths?: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths ?? {})
    .filter(([path, ops]) => /^\/api\/v1\/[a-z0-9][a-z0-9_-]*$/.test(path) && ops.options !== undefined)
    .map(([path]) => path.slice('/api/v1/'.length));
}

export const entities = signal<string[] | undefined>(load<string[]>('entities'));
/** The entities that keep revisions (history not turned off): those with /{slug}/{id}/revisions in the document. */
export const historyEntities = signal<string[] | undefined>(load<string[]>('historyEntities'));
/** The webhook event types (`<entity name>.created|updated|deleted`): the document's `webhooks`. */
export const eventTypes = signal<string[]>(load<string[]>('eventTypes') ?? []);
export const entitiesError = signal<string | undefined>(undefined);

/** The document is public, cached by the browser and never rate-limited. */
export async function loadEntities(): Promise<void> {
  if (entities.value && historyEntities.value) return;
  try {
    const { body } = await unwrap<{ paths: Record<string, Record<string, unknown>>; webhooks?: Record<string, unknown> }>(client.GET('/api/v1/openapi.json'));
    eventTypes.value = Object.keys(body.webhooks ?? {}).sort();
    save('eventTypes', eventTypes.value);
    const slugs = entitySlugs(body);
    historyEntities.value = slugs.filter((slug) => `/api/v1/${slug}/{id}/revisions` in body.paths);
    save('historyEntities', historyEntities.value);
    entities.value = slugs;
    save('entities', entities.value);
  } catch (e) {
    entitiesError.value = (e as Error).message;
  }
}

const descriptions = new Map<string, Promise<EntityDescription>>();

/** OPTIONS /api/v1/{slug}, once per browser session and user. */
export function describe(slug: string): Promise<EntityDescription> {
  const key = `options.${me.value?.id ?? 'anonymous'}.${slug}`;
  let pending = descriptions.get(key);
  if (!pending) {
    const stored = load<EntityDescription>(key);
    pending = stored
      ? Promise.resolve(stored)
      : unwrap<{ data: EntityDescription }>(client.OPTIONS(collectionPath(slug))).then(({ body }) => {
          save(key, body.data);
          return body.data;
        });
    pending.catch(() => descriptions.delete(key));
    descriptions.set(key, pending);
  }
  return pending;
}
