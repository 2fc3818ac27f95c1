/**
 * Saved views and the page after sign-in. A view is the explorer's URL (filters, search, sort,
 * columns and their widths: query.ts), so sharing it is sharing the address. Saved views and the
 * last view visited are kept per user in this browser (store.ts says why not in `preferences`).
 */
import { client, collectionPath, unwrap, type Pagination } from './api.js';
import { userStore } from './store.js';

export interface SavedView {
  name: string;
  entity: string;
  /** The view's URL query, as after `#/<entity>?` (no cursor: a saved view opens on its first page). */
  query: string;
}

export function savedViews(userId: string): SavedView[] {
  return userStore.get<SavedView[]>(userId, 'views') ?? [];
}

/** Saves (or replaces, by name and entity) a view; returns the list. */
export function saveView(userId: string, view: SavedView): SavedView[] {
  const list = [...savedViews(userId).filter((v) => !(v.entity === view.entity && v.name === view.name)), view];
  list.sort((a, b) => a.entity.localeCompare(b.entity) || a.name.localeCompare(b.name));
  userStore.set(userId, 'views', list);
  return list;
}

export function deleteView(userId: string, view: SavedView): SavedView[] {
  const list = savedViews(userId).filter((v) => !(v.entity === view.entity && v.name === view.name));
  userStore.set(userId, 'views', list);
  return list;
}

/** The explorer view the user was last on (`tasks?sort=title`), kept as they browse. */
export function rememberView(userId: string, entity: string, query: string): void {
  userStore.set(userId, 'lastView', { entity, query });
}

/**
 * Where to go after sign-in: the last view visited, else the entity with the most records (one
 * LIST of one record per entity, once: the explorer then remembers the view).
 */
export async function defaultView(userId: string, entities: string[]): Promise<{ path: string; params?: URLSearchParams }> {
  const last = userStore.get<{ entity: string; query: string }>(userId, 'lastView');
  if (last && entities.includes(last.entity)) return { path: last.entity, params: new URLSearchParams(last.query) };
  const totals = await Promise.all(
    entities.map((slug) =>
      unwrap<{ pagination: Pagination }>(client.GET(collectionPath(slug), { params: { query: { limit: 1, fields: 'id' } as never } })).then(
        ({ body }) => body.pagination.total,
        () => -1,
      ),
    ),
  );
  const best = totals.reduce((top, total, i) => (total > totals[top] ? i : top), 0);
  return { path: entities[best] };
}
