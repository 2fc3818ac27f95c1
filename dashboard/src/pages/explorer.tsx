/**
 * The records explorer of one entity: LIST as a table whose columns are the entity's fields,
 * with sort, search, a filter builder over SPEC.md's operators, page size, cursor paging and the
 * total. The view lives in the URL; the panel shows the exact request and what it cost.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, apiOrigin, basePath, client, collectionPath, unwrap, type ApiRecord, type Pagination } from '../api.js';
import { columns as columnsOf, type EntityDescription } from '../form.js';
import { clientCall, curlCommand, listQuery, OPERATOR_LABELS, OPERATORS, PAGE_SIZES, paramsToView, viewToParams, type FilterRow, type View } from '../query.js';
import { href, navigate, route } from '../router.js';
import { describe, flash } from '../state.js';
import { Confirm, ErrorText, Loading } from '../ui.js';
import { ExportDialog, ImportDialog } from './transfer.js';

interface ListState {
  records: ApiRecord[];
  pagination: Pagination;
  cost: string | null;
  timing: string | null;
}

export function numericFields(description?: EntityDescription): Set<string> {
  return new Set(Object.entries(description?.schema ?? {}).filter(([, d]) => d.type === 'number').map(([n]) => n));
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function Explorer({ slug }: { slug: string }) {
  const [description, setDescription] = useState<EntityDescription>();
  const [error, setError] = useState<ApiFailure | Error>();
  const [list, setList] = useState<ListState>();
  const [loading, setLoading] = useState(true);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [reload, setReload] = useState(0);
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState<'csv' | 'ndjson'>();

  const live = useLive(slug, Boolean(description?.permissions.read));
  const params = route.value.params;
  const view = useMemo(() => paramsToView(params), [params.toString()]);
  const numeric = numericFields(description);
  const query = listQuery(view, numeric);
  const path = `/api/v1/${slug}`;

  useEffect(() => {
    describe(slug).then(setDescription, setError);
  }, [slug]);

  useEffect(() => {
    if (!description) return;
    let current = true;
    setLoading(true);
    setError(undefined);
    unwrap<{ data: ApiRecord[]; pagination: Pagination }>(client.GET(collectionPath(slug), { params: { query: query as never } }))
      .then(({ body, response }) => {
        if (!current) return;
        setList({ records: body.data, pagination: body.pagination, cost: response.headers.get('X-Request-Cost'), timing: response.headers.get('Server-Timing') });
        setSelected(new Set());
        live.reset();
      })
      .catch((e: Error) => current && setError(e))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [description, JSON.stringify(query), reload]);

  function show(next: View) {
    navigate(slug, viewToParams(next, numeric));
  }

  const cols = description ? columnsOf(description) : [];
  const canWrite = description?.permissions.write && description.methods.includes('POST');
  const canDelete = description?.permissions.delete && description.methods.includes('DELETE');
  const filtered = Boolean(view.search || view.filters.length);

  async function bulkDelete() {
    setDeleting(true);
    try {
      const { body } = await unwrap<{ data: { deleted: number } }>(client.DELETE(collectionPath(slug), { body: { ids: [...selected] } as never }));
      flash(`Deleted ${body.data.deleted} ${slug}.`);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setDeleting(false);
      setConfirming(false);
    }
  }

  return (
    <section class="explorer">
      <div class="page-head">
        <h1>{slug}</h1>
        <div class="head-actions">
          {description && (
            <>
              <button type="button" class="secondary outline" disabled={!list} title="Every record of this view, as CSV" onClick={() => setExporting('csv')}>
                Export CSV
              </button>
              <button type="button" class="secondary outline" disabled={!list} title="Every record of this view, as NDJSON (one JSON object a line)" onClick={() => setExporting('ndjson')}>
                Export NDJSON
              </button>
            </>
          )}
          {canWrite && (
            <button type="button" class="secondary outline" onClick={() => setImporting(true)}>
              Import
            </button>
          )}
          {canWrite && (
            <a href={href(`${slug}/new`)} role="button">
              New
            </a>
          )}
        </div>
      </div>
      <Toolbar view={view} description={description} onChange={show} />
      {error && <ErrorText message={error.message} code={(error as ApiFailure).code} />}
      {!description && !error && <Loading label={`Loading the description of ${slug}`} />}
      {description && list && (
        <>
          <div class="list-meta">
            <span>
              {list.pagination.total} {list.pagination.total === 1 ? 'record' : 'records'}
              {filtered ? ' match this view' : ''}
            </span>
            {canDelete && selected.size > 0 && (
              <button type="button" class="danger small" onClick={() => setConfirming(true)}>
                Delete selected ({selected.size})
              </button>
            )}
          </div>
          <div class="table-wrap" aria-busy={loading ? 'true' : undefined}>
            <table class="striped">
              <caption class="visually-hidden">
                {slug}: {list.records.length} of {list.pagination.total}
              </caption>
              <thead>
                <tr>
                  {canDelete && (
                    <th scope="col" class="check">
                      <input
                        type="checkbox"
                        aria-label="Select all on this page"
                        checked={list.records.length > 0 && selected.size === list.records.length}
                        onChange={(e) => setSelected(e.currentTarget.checked ? new Set(list.records.map((r) => r.id)) : new Set())}
                      />
                    </th>
                  )}
                  {cols.map((c) => (
                    <th key={c} scope="col" aria-sort={view.sort === c ? (view.order === 'asc' ? 'ascending' : 'descending') : undefined}>
                      <button
                        type="button"
                        class="sort"
                        onClick={() => show({ ...view, sort: c, order: view.sort === c && view.order === 'asc' ? 'desc' : 'asc', cursor: '', trail: [] })}
                      >
                        {c}
                        <span aria-hidden="true">{view.sort === c ? (view.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                      </button>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {[...live.added.filter((r) => !list.records.some((x) => x.id === r.id)), ...list.records].map((original) => {
                  const mark = live.marks.get(original.id);
                  const r = live.latest.get(original.id) ?? original;
                  return (
                  <tr key={r.id} class={[selected.has(r.id) ? 'selected' : '', mark ? `live-${mark}` : ''].join(' ').trim() || undefined}>
                    {canDelete && (
                      <td class="check">
                        <input
                          type="checkbox"
                          aria-label={`Select ${r.id}`}
                          checked={selected.has(r.id)}
                          onChange={(e) => {
                            const next = new Set(selected);
                            if (e.currentTarget.checked) next.add(r.id);
                            else next.delete(r.id);
                            setSelected(next);
                          }}
                        />
                      </td>
                    )}
                    {cols.map((c) => (
                      <td key={c}>
                        {c === 'id' ? (
                          <>
                            <a href={href(`${slug}/${encodeURIComponent(r.id)}`)}>{r.id}</a>
                            {mark && <span class={`live-badge ${mark}`}>{mark}</span>}
                          </>
                        ) : (
                          <span class="cell">{cell(r[c])}</span>
                        )}
                      </td>
                    ))}
                  </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {list.records.length === 0 && (
            <p class="empty">
              {filtered
                ? 'No records match this view. Change the search or the filters, or clear them.'
                : canWrite
                  ? `No ${slug} yet. Create the first one with New.`
                  : `No ${slug} yet.`}
            </p>
          )}
          <p class="live-status" aria-live="polite">
            <span class={`dot ${live.connected ? 'on' : ''}`} aria-hidden="true" />
            {live.connected ? 'Live: changes appear as they happen' : 'Live updates are reconnecting…'}
            {live.announcement ? ` · ${live.announcement}` : ''}
          </p>
          <Pager view={view} pagination={list.pagination} onChange={show} />
          <RequestPanel path={path} query={query} cost={list.cost} timing={list.timing} />
        </>
      )}
      {description && !list && !error && <Loading label={`Loading ${slug}`} />}
      {exporting && description && list && (
        <ExportDialog slug={slug} description={description} query={query} total={list.pagination.total} format={exporting} onClose={() => setExporting(undefined)} />
      )}
      {importing && description && <ImportDialog slug={slug} description={description} onClose={() => setImporting(false)} onDone={() => setReload((n) => n + 1)} />}
      {confirming && (
        <Confirm
          title={`Delete ${selected.size} ${slug}?`}
          text={description?.schema.deletedAt ? 'The selected records are soft-deleted: they get a deletedAt time and leave every list.' : 'The selected records are deleted permanently.'}
          action="Delete"
          busy={deleting}
          onConfirm={bulkDelete}
          onClose={() => setConfirming(false)}
        />
      )}
    </section>
  );
}

type Mark = 'created' | 'updated' | 'deleted';

/**
 * The entity's event stream (GET /api/v1/stream/{slug}, text/event-stream): created records are
 * shown on top, changed and deleted ones are marked. The browser's EventSource reconnects by
 * itself with Last-Event-ID, so nothing is missed; one open stream costs one request however
 * long it stays open (the server ends it after 14 minutes, and the browser reconnects).
 */
function useLive(slug: string, enabled: boolean) {
  const [connected, setConnected] = useState(false);
  const [added, setAdded] = useState<ApiRecord[]>([]);
  const [marks, setMarks] = useState<Map<string, Mark>>(new Map());
  const [latest, setLatest] = useState<Map<string, ApiRecord>>(new Map());
  const [announcement, setAnnouncement] = useState('');

  useEffect(() => {
    if (!enabled) return;
    const source = new EventSource(`${apiOrigin}/api/v1/stream/${encodeURIComponent(slug)}`, { withCredentials: true });
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(source.readyState === EventSource.OPEN);
    source.onmessage = (message) => {
      let payload: { type?: string; record?: ApiRecord };
      try {
        payload = JSON.parse(message.data as string);
      } catch {
        return;
      }
      const change = payload.type?.slice(payload.type.lastIndexOf('.') + 1) as Mark | undefined;
      const record = payload.record;
      if (!record?.id || !change || !['created', 'updated', 'deleted'].includes(change)) return;
      setMarks((m) => new Map(m).set(record.id, change === 'updated' && m.get(record.id) === 'created' ? 'created' : change));
      if (change === 'created') setAdded((a) => [record, ...a.filter((r) => r.id !== record.id)]);
      if (change !== 'deleted') setLatest((l) => new Map(l).set(record.id, record));
      setAnnouncement(`${record.id} ${change}`);
    };
    return () => source.close();
  }, [slug, enabled]);

  return {
    connected,
    added,
    marks,
    latest,
    announcement,
    /** A new page of results: marks of what it shows are kept, the rows added live go. */
    reset: () => setAdded([]),
  };
}

function Toolbar({ view, description, onChange }: { view: View; description?: EntityDescription; onChange: (v: View) => void }) {
  const [search, setSearch] = useState(view.search);
  const [rows, setRows] = useState<FilterRow[]>(view.filters);
  useEffect(() => setSearch(view.search), [view.search]);
  useEffect(() => setRows(view.filters), [JSON.stringify(view.filters)]);
  const fields = Object.entries(description?.schema ?? {})
    .filter(([, d]) => d.type !== 'array')
    .map(([n]) => n);

  function apply(e: Event) {
    e.preventDefault();
    onChange({ ...view, search: search.trim(), filters: rows.filter((r) => r.field), cursor: '', trail: [] });
  }
  const update = (i: number, patch: Partial<FilterRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  return (
    <form class="toolbar" onSubmit={apply} role="search" aria-label="Search and filter">
      <div class="toolbar-row">
        <input type="search" name="search" aria-label="Search" placeholder="Search…" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <label class="inline">
          <span>Page size</span>
          <select aria-label="Page size" value={String(view.limit)} onChange={(e) => onChange({ ...view, limit: Number(e.currentTarget.value), cursor: '', trail: [] })}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary outline" onClick={() => setRows([...rows, { field: fields[0] ?? '', op: '$eq', value: '' }])}>
          Add filter
        </button>
        <button type="submit">Apply</button>
      </div>
      {rows.length > 0 && (
        <fieldset class="filters">
          <legend>Filters (all must match)</legend>
          {rows.map((row, i) => (
            <div class="filter-row" key={i}>
              <select aria-label={`Filter ${i + 1} field`} value={row.field} onChange={(e) => update(i, { field: e.currentTarget.value })}>
                {fields.map((f) => (
                  <option key={f} value={f}>
                    {f}
                  </option>
                ))}
              </select>
              <select aria-label={`Filter ${i + 1} operator`} value={row.op} onChange={(e) => update(i, { op: e.currentTarget.value as FilterRow['op'] })}>
                {OPERATORS.map((op) => (
                  <option key={op} value={op}>
                    {OPERATOR_LABELS[op]}
                  </option>
                ))}
              </select>
              <input aria-label={`Filter ${i + 1} value`} value={row.value} onInput={(e) => update(i, { value: e.currentTarget.value })} />
              <button type="button" class="secondary outline small" aria-label={`Remove filter ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                ✕
              </button>
            </div>
          ))}
          <button type="button" class="secondary outline small" onClick={() => onChange({ ...view, search: '', filters: [], cursor: '', trail: [] })}>
            Clear search and filters
          </button>
        </fieldset>
      )}
    </form>
  );
}

function Pager({ view, pagination, onChange }: { view: View; pagination: Pagination; onChange: (v: View) => void }) {
  const hasPrev = view.cursor !== '';
  const hasNext = Boolean(pagination.hasNext && pagination.nextCursor);
  if (!hasPrev && !hasNext) return null;
  return (
    <nav aria-label="Pages" class="pager">
      <button type="button" class="secondary outline" disabled={!hasPrev} onClick={() => onChange({ ...view, cursor: view.trail.at(-1) ?? '', trail: view.trail.slice(0, -1) })}>
        ← Previous
      </button>
      <span>
        Page {pagination.page} of {Math.max(1, pagination.totalPages)}
      </span>
      <button type="button" class="secondary outline" disabled={!hasNext} onClick={() => onChange({ ...view, cursor: pagination.nextCursor!, trail: view.cursor ? [...view.trail, view.cursor] : view.trail })}>
        Next →
      </button>
    </nav>
  );
}

function RequestPanel({ path, query, cost, timing }: { path: string; query: Record<string, string>; cost: string | null; timing: string | null }) {
  const fullPath = `${basePath}${path}`;
  return (
    <details class="request-panel">
      <summary>Request for this view</summary>
      <dl>
        <dt>curl</dt>
        <dd>
          <pre>
            <code>{curlCommand(location.origin, fullPath, query)}</code>
          </pre>
        </dd>
        <dt>Typed client (packages/client)</dt>
        <dd>
          <pre>
            <code>{clientCall(apiOrigin, path, query)}</code>
          </pre>
        </dd>
        <dt>X-Request-Cost</dt>
        <dd>
          <code>{cost ?? 'not reported'}</code>
        </dd>
        <dt>Server-Timing</dt>
        <dd>
          <code>{timing ?? 'not reported'}</code>
        </dd>
      </dl>
    </details>
  );
}

