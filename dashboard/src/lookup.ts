/**
 * The label book the explorer and the pickers share for the browser tab, and the batched look-up
 * of labels a LIST did not embed (labels.ts): one request per related entity and 100 ids.
 */
import { signal } from '@preact/signals';
import { client, collectionPath, unwrap, type ApiRecord } from './api.js';
import { LabelBook, type Reference } from './labels.js';
import { me } from './state.js';

export const book = new LabelBook();
/** Bumped when labels were learnt: tables showing ids draw them again. */
export const labelsLearnt = signal(0);

let usersAsked = false;
const inFlight = new Set<string>();

/** Looks up the labels `rows` need and the book has not got; never throws (an id stays an id). */
export async function lookUpLabels(references: Reference[], rows: Record<string, unknown>[]): Promise<void> {
  const missing = book.missing(references, rows);
  let learnt = false;
  for (const [entity, all] of missing) {
    const ids = all.filter((id) => !inFlight.has(`${entity}/${id}`));
    if (!ids.length) continue;
    ids.forEach((id) => inFlight.add(`${entity}/${id}`));
    try {
      if (entity === 'users') {
        // Users are listed to admins only (the tenant's users, one request); others see names through the embedded relation.
        if (me.value?.role === 'admin' && !usersAsked) {
          usersAsked = true;
          const { body } = await unwrap<{ data: ApiRecord[] }>(client.GET('/api/v1/users'));
          book.learn('users', body.data.map((u) => ({ id: u.id, name: u.name ?? u.email })));
        }
        book.forget('users', ids);
      } else {
        for (let i = 0; i < ids.length; i += 100) {
          const chunk = ids.slice(i, i + 100);
          const { body } = await unwrap<{ data: ApiRecord[] }>(client.GET(collectionPath(entity), { params: { query: { ids: chunk.join(','), limit: 100 } as never } }));
          book.learn(entity, body.data);
          book.forget(entity, chunk);
        }
      }
      learnt = true;
    } catch {
      // Not visible or not reachable now: the ids are shown as they are.
    } finally {
      ids.forEach((id) => inFlight.delete(`${entity}/${id}`));
    }
  }
  if (learnt) labelsLearnt.value += 1;
}
