/**
 * History in the console (docs/history.md): a record's History tab (its revisions newest first,
 * each with who, when and a per-field diff, "Load more" by cursor, and "Restore this version"
 * with If-Match) and an entity's Trash (the records deleted within retention, each restored by
 * the same call with the revision before its deletion).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, client, restorePath, revisionsPath, trashPath, unwrap, type ApiRecord } from '../api.js';
import { actorText, diffRows, operationText, restorable, revisionBeforeDeletion, type Revision, type TrashEntry } from '../history.js';
import { labelOf } from '../labels.js';
import { href } from '../router.js';
import { describe, flash, me } from '../state.js';
import { Confirm, ErrorText, Loading, when } from '../ui.js';

/** POST /{slug}/{id}/restore: the record and its new ETag. */
async function restore(slug: string, id: string, revision: number, etag?: string): Promise<{ record: ApiRecord; etag?: string }> {
  const { body, response } = await unwrap<{ data: ApiRecord }>(
    client.POST(restorePath(slug), { params: { path: { id }, header: (etag ? { 'If-Match': etag } : {}) as never }, body: { revision } as never }),
  );
  return { record: body.data, etag: response.headers.get('ETag') ?? undefined };
}

/** A refusal of a restore in words: the rule a restored value breaks (422) or the value taken since (409), field by field. */
function refusal(failure: ApiFailure): string {
  const details = Object.entries(failure.details).map(([field, why]) => `${field} ${why}`);
  const why = failure.status === 409 ? 'a unique value it held is taken by another record now' : failure.status === 422 ? 'a value it held breaks a rule of the entity now' : '';
  return `This version cannot be restored${why ? ` as it is: ${why}` : ''}. ${failure.message}${details.length ? `: ${details.join('; ')}` : ''}`;
}

function Diff({ revision, order }: { revision: Revision; order: readonly string[] }) {
  const rows = diffRows(revision.changes, order);
  if (!rows.length) return <p class="muted">No field shown to you changed.</p>;
  // Fixed layout: long values wrap inside their cell, so the diff never scrolls sideways.
  return (
    <table class="diff">
      <caption class="visually-hidden">Changes of revision {revision.revision}</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.field}>
            <th scope="row">{r.field}</th>
            <td class="from">{r.from}</td>
            <td class="to">{r.to}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A record's revisions. `etag` is the record's current one (If-Match of a restore); `onRestored`
 * hands the restored record to the editor, `onReload` reads the record again (after a 412).
 */
export function HistoryPanel({
  slug,
  id,
  order,
  etag,
  onRestored,
  onReload,
}: {
  slug: string;
  id: string;
  order: readonly string[];
  etag?: string;
  onRestored: (record: ApiRecord, etag?: string) => void;
  onReload: () => Promise<void>;
}) {
  const [revisions, setRevisions] = useState<Revision[]>();
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<Error>();
  const [confirming, setConfirming] = useState<number>();
  const [busy, setBusy] = useState(false);
  const [conflict, setConflict] = useState(false);
  const [failure, setFailure] = useState<ApiFailure>();

  async function load(cursor?: string) {
    setLoading(true);
    setError(undefined);
    try {
      const query = { limit: 20, ...(cursor ? { cursor } : {}) };
      const { body } = await unwrap<{ data: Revision[]; pagination: { nextCursor: string | null; hasNext: boolean } }>(
        client.GET(revisionsPath(slug), { params: { path: { id }, query: query as never } }),
      );
      setRevisions((before) => (cursor ? [...(before ?? []), ...body.data] : body.data));
      setNext(body.pagination.hasNext ? body.pagination.nextCursor : null);
    } catch (e) {
      setError(e as Error);
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    load();
  }, [slug, id]);

  async function restoreTo(n: number) {
    setBusy(true);
    setConflict(false);
    setFailure(undefined);
    try {
      const restored = await restore(slug, id, n, etag);
      setConfirming(undefined);
      onRestored(restored.record, restored.etag);
      flash(`Restored ${id} to revision ${n}: saved as a new revision, which can be undone the same way.`);
      await load();
    } catch (e) {
      setConfirming(undefined);
      if (e instanceof ApiFailure && e.status === 412) setConflict(true);
      else setFailure(e instanceof ApiFailure ? e : new ApiFailure(0, 'ERROR', String(e)));
    } finally {
      setBusy(false);
    }
  }

  async function reload() {
    setConflict(false);
    await onReload();
    await load();
  }

  const latest = revisions?.[0]?.revision;
  const deleted = revisions?.[0]?.operation === 'delete';
  return (
    <section class="history" aria-labelledby="history-title">
      <h2 id="history-title" class="visually-hidden">
        History of {id}
      </h2>
      {conflict && (
        <div role="alert" class="conflict">
          <p>
            <strong>This record was changed by someone else</strong> since you opened it (412 Precondition Failed: your If-Match no longer matches). Nothing was restored.
          </p>
          <button type="button" onClick={reload}>
            Reload the record and its history
          </button>
        </div>
      )}
      {failure && <ErrorText message={refusal(failure)} code={failure.code} />}
      {revisions && revisions.length === 0 && <p class="empty">No revisions are kept for this record (none within the entity's retention).</p>}
      {revisions && revisions.length > 0 && (
        <ol class="revisions">
          {revisions.map((r) => (
            <li key={r.revision} class="revision">
              <div class="revision-head">
                <h3 id={`rev-${r.revision}`}>
                  Revision {r.revision}: {operationText(r)}
                  {r.revision === latest ? <span class="badge">{deleted ? 'deleted' : 'current'}</span> : null}
                </h3>
                <p class="muted">
                  <time dateTime={r.at}>{when(r.at)}</time> · by {actorText(r.actor, me.value?.id)}
                  {r.requestId ? <> · request <code>{r.requestId}</code></> : null}
                </p>
              </div>
              <Diff revision={r} order={order} />
              {restorable(r, latest, deleted) && (
                <button type="button" class="secondary outline small" aria-describedby={`rev-${r.revision}`} disabled={busy} onClick={() => setConfirming(r.revision)}>
                  Restore this version
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
      {error && <ErrorText error={error} onRetry={() => load(revisions?.length ? (next ?? undefined) : undefined)} />}
      {loading && <Loading label="Loading the history" />}
      {!loading && next && (
        <button type="button" class="secondary outline" onClick={() => load(next)}>
          Load more
        </button>
      )}
      {confirming !== undefined && (
        <Confirm
          title={`Restore revision ${confirming}?`}
          text={`${id} becomes as it stood after revision ${confirming}: every field, and its metadata. The restore is saved as a new revision, so it can be undone by restoring the one before it.`}
          action="Restore"
          busy={busy}
          onConfirm={() => restoreTo(confirming)}
          onClose={() => setConfirming(undefined)}
        />
      )}
    </section>
  );
}

/** A trash entry's record as it stood before its deletion: read when asked for (one request). */
function Held({ slug, entry }: { slug: string; entry: TrashEntry }) {
  const [record, setRecord] = useState<ApiRecord>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    const path = `${revisionsPath(slug)}/{revision}` as '/api/v1/tasks/{id}/revisions/{revision}';
    unwrap<{ data: { record: ApiRecord } }>(client.GET(path, { params: { path: { id: entry.id, revision: revisionBeforeDeletion(entry) } as never } })).then(
      ({ body }) => setRecord(body.data.record),
      setError,
    );
  }, [entry.id]);
  if (error) return <ErrorText error={error} />;
  if (!record) return <Loading label="Loading" />;
  return (
    <dl class="held">
      {Object.entries(record)
        .filter(([k, v]) => k !== 'id' && v !== null && v !== undefined && !(typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length))
        .map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
          </div>
        ))}
    </dl>
  );
}

/** #/<entity>/trash: the records of the entity deleted within retention that the caller may bring back. */
export function Trash({ slug }: { slug: string }) {
  const [entries, setEntries] = useState<TrashEntry[]>();
  const [error, setError] = useState<Error>();
  const [softDelete, setSoftDelete] = useState<boolean>();
  const [restoring, setRestoring] = useState<string>();
  const [failure, setFailure] = useState<{ id: string; error: ApiFailure }>();
  const [open, setOpen] = useState<Set<string>>(new Set());
  const [next, setNext] = useState<string>();
  const [loading, setLoading] = useState(false);

  /** A page of the trash: the first, or the one after `cursor` (appended). */
  async function load(cursor?: string) {
    setLoading(true);
    setError(undefined);
    try {
      const { body } = await unwrap<{ data: TrashEntry[]; pagination?: { hasNext?: boolean; nextCursor?: string | null } }>(
        client.GET(trashPath(slug), { params: { query: (cursor ? { cursor } : {}) as never } }),
      );
      setEntries((before) => (cursor ? [...(before ?? []), ...body.data] : body.data));
      setNext(body.pagination?.hasNext && body.pagination.nextCursor ? body.pagination.nextCursor : undefined);
    } catch (e) {
      setError(e as Error);
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    describe(slug).then((d) => setSoftDelete('deletedAt' in d.schema), () => undefined);
    load();
  }, [slug]);

  async function bringBack(entry: TrashEntry) {
    setRestoring(entry.id);
    setFailure(undefined);
    try {
      const { record } = await restore(slug, entry.id, revisionBeforeDeletion(entry));
      const label = labelOf(record);
      setEntries((list) => list?.filter((e) => e.id !== entry.id));
      flash(`Restored ${label ? `“${label}” (${entry.id})` : entry.id}: it is listed and counted again.`);
    } catch (e) {
      setFailure({ id: entry.id, error: e instanceof ApiFailure ? e : new ApiFailure(0, 'ERROR', String(e)) });
    } finally {
      setRestoring(undefined);
    }
  }

  return (
    <section class="trash">
      <nav aria-label="breadcrumb" class="crumbs">
        <ul>
          <li>
            <a href={href(slug)}>{slug}</a>
          </li>
          <li>Trash</li>
        </ul>
      </nav>
      <h1>Trash: {slug}</h1>
      <p class="muted">
        The {slug} deleted within the entity's history retention{softDelete === undefined ? '' : softDelete ? ' (soft-deleted: they have a deletedAt time)' : ' (deleted permanently)'}, newest first. Restore
        brings one back with its id, as it stood before it was deleted.
      </p>
      {failure && <ErrorText message={`${failure.id}: ${refusal(failure.error)}`} code={failure.error.code} />}
      {error && <ErrorText error={error} onRetry={() => load(entries?.length ? next : undefined)} />}
      {!entries && !error && <Loading label="Loading the trash" />}
      {entries && entries.length === 0 && !next && <p class="empty">Nothing to restore: no {slug} were deleted within the retention.</p>}
      {entries && entries.length > 0 && (
        // A list, not a table: on a phone each entry wraps, its Restore in sight.
        <ul class="trash-list" aria-label={`Deleted ${slug}`}>
          {entries.map((e) => (
            <li key={e.id}>
              <div class="trash-entry">
                <code>{e.id}</code>
                <span class="muted">
                  deleted <time dateTime={e.deletedAt}>{when(e.deletedAt)}</time>
                </span>
                <button type="button" class="small" aria-label={`Restore ${e.id}`} aria-busy={restoring === e.id ? 'true' : undefined} disabled={restoring !== undefined} onClick={() => bringBack(e)}>
                  Restore
                </button>
              </div>
              <details
                onToggle={(ev) => {
                  const isOpen = (ev.currentTarget as HTMLDetailsElement).open;
                  setOpen((s) => {
                    const n = new Set(s);
                    if (isOpen) n.add(e.id);
                    else n.delete(e.id);
                    return n;
                  });
                }}
              >
                <summary>What it held</summary>
                {open.has(e.id) && <Held slug={slug} entry={e} />}
              </details>
            </li>
          ))}
        </ul>
      )}
      {entries && loading && <Loading label="Loading more of the trash" />}
      {!loading && next && (
        <button type="button" class="secondary outline" onClick={() => load(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
