/**
 * The records explorer of one entity: LIST as a table of the columns the user chose (in their
 * order and widths), references by their labels, cells edited in place, sort, search, a filter
 * builder over SPEC.md's operators, page size, cursor paging and a total that follows the live
 * rows, and charts of the view (pages/charts.tsx). The view lives in the URL (so it can be saved,
 * bookmarked and shared); one view costs one request, and its charts two more when its search or
 * filters change. The panel shows the exact requests and what they cost.
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, apiOrigin, basePath, client, collectionPath, unwrap, type ApiRecord, type Pagination } from '../api.js';
import { includeOf, referencesOf } from '../labels.js';
import { useLive } from '../live.js';
import { book, lookUpLabels } from '../lookup.js';
import { clientCall, curlCommand, firstPage, listQuery, liveTotal, OPERATOR_LABELS, OPERATORS, PAGE_SIZES, paramsToView, viewToParams, visibleColumns, type FilterRow, type View } from '../query.js';
import { href, navigate, route } from '../router.js';
import { describe, historyEntities, me } from '../state.js';
import { RecordsTable } from '../table.js';
import { Confirm, ErrorText, Loading, Modal } from '../ui.js';
import { formFields, toBody, type EntityDescription, type FormValue } from '../form.js';
import { bulkText } from '../history.js';
import { offerUndo } from '../undo.js';
import { Field } from './editor.js';
import { rememberView } from '../views.js';
import { Charts, type ChartCall } from './charts.js';
import { ColumnsDialog, SavedViews } from './views.js';
import { ExportDialog, ImportDialog } from './transfer.js';

interface ListState {
  records: ApiRecord[];
  pagination: Pagination;
  query: Record<string, string>;
  cost: string | null;
  timing: string | null;
}

export function numericFields(description?: EntityDescription): Set<string> {
  return new Set(Object.entries(description?.schema ?? {}).filter(([, d]) => d.type === 'number').map(([n]) => n));
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
  const [choosing, setChoosing] = useState(false);
  const [chartCalls, setChartCalls] = useState<ChartCall[]>([]);
  const [bulkEditing, setBulkEditing] = useState(false);

  const live = useLive(slug, Boolean(description?.permissions.read));
  const params = route.value.params;
  const view = useMemo(() => paramsToView(params), [params.toString()]);
  const numeric = numericFields(description);
  const query = listQuery(view, numeric);
  const references = useMemo(() => (description ? referencesOf(description) : []), [description]);
  const path = `/api/v1/${slug}`;

  useEffect(() => {
    describe(slug).then(setDescription, setError);
  }, [slug]);

  useEffect(() => {
    // The view is remembered as the place to come back to after the next sign-in.
    if (me.value) rememberView(me.value.id, slug, viewToParams(firstPage(view)).toString());
  }, [slug, params.toString()]);

  useEffect(() => {
    if (!description) return;
    let current = true;
    setLoading(true);
    setError(undefined);
    // The references' records come embedded in the same request: their labels cost nothing more.
    const include = includeOf(references);
    const sent = { ...query, ...(include ? { include } : {}) };
    unwrap<{ data: ApiRecord[]; pagination: Pagination }>(client.GET(collectionPath(slug), { params: { query: sent as never } }))
      .then(({ body, response }) => {
        if (!current) return;
        book.learnEmbedded(references, body.data);
        setList({ records: body.data, pagination: body.pagination, query: sent, cost: response.headers.get('X-Request-Cost'), timing: response.headers.get('Server-Timing') });
        setSelected(new Set());
        live.reset();
        lookUpLabels(references, body.data);
      })
      .catch((e: Error) => current && setError(e))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [description, JSON.stringify(query), reload]);

  useEffect(() => {
    // Rows that arrived live carry no embedded records: their labels are looked up in one batch.
    if (!live.added.length && !live.latest.size) return;
    const timer = setTimeout(() => lookUpLabels(references, [...live.added, ...live.latest.values()]), 500);
    return () => clearTimeout(timer);
  }, [live.added, live.latest]);

  function show(next: View, options: { replace?: boolean } = {}) {
    navigate(slug, viewToParams(next, numeric), options);
  }

  const all = description ? Object.keys(description.schema) : [];
  const cols = visibleColumns(view, all);
  const canWrite = description?.permissions.write && description.methods.includes('POST');
  const canDelete = Boolean(description?.permissions.delete && description.methods.includes('DELETE'));
  const canBulkEdit = Boolean(description?.permissions.write && description.methods.includes('PATCH'));
  const selectable = canDelete || canBulkEdit;
  const withHistory = Boolean(historyEntities.value?.includes(slug));
  const filtered = Boolean(view.search || view.filters.length);

  async function bulkDelete() {
    setDeleting(true);
    try {
      const { body } = await unwrap<{ data: { deleted: number; failed?: number; operationId?: string } }>(client.DELETE(collectionPath(slug), { body: { ids: [...selected] } as never }));
      offerUndo(bulkText('Deleted', body.data.deleted, slug, body.data.failed), body.data.deleted ? [body.data.operationId] : [], () => setReload((n) => n + 1));
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setDeleting(false);
      setConfirming(false);
    }
  }

  const rows = list
    ? [...live.added.filter((r) => !list.records.some((x) => x.id === r.id)), ...list.records].map((original) => {
        // The newer of the two: a page read after an undo is newer than the event of the bulk call it undid.
        const seen = live.latest.get(original.id);
        return { record: seen && String(seen.updatedAt ?? '') >= String(original.updatedAt ?? '') ? seen : original, mark: live.marks.get(original.id) };
      })
    : [];
  const total = list ? liveTotal(list.pagination.total, list.records.map((r) => r.id), live.added, live.marks) : 0;

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
          <a href={href(`${slug}/schema`)} role="button" class="secondary outline">
            Schema
          </a>
          {withHistory && (
            <a href={href(`${slug}/trash`)} role="button" class="secondary outline" title={`The ${slug} deleted within retention, to restore`}>
              Trash
            </a>
          )}
          {canWrite && (
            <a href={href(`${slug}/new`)} role="button">
              New
            </a>
          )}
        </div>
      </div>
      <Toolbar view={view} description={description} onChange={show} />
      {description && (
        <div class="view-bar">
          <SavedViews slug={slug} view={view} numeric={numeric} />
          <button type="button" class="secondary outline small" onClick={() => setChoosing(true)}>
            Columns
          </button>
        </div>
      )}
      {/* After the view's LIST: its total says whether the charts draw at once, and the table comes first. */}
      {description?.permissions.read && list && <Charts slug={slug} description={description} listQuery={list.query} total={list.pagination.total} reload={reload} onCalls={setChartCalls} />}
      {error && <ErrorText error={error} />}
      {!description && !error && <Loading label={`Loading the description of ${slug}`} />}
      {description && list && (
        <>
          <div class="list-meta">
            <span aria-live="polite">
              {total} {total === 1 ? 'record' : 'records'}
              {filtered ? ' match this view' : ''}
            </span>
            {selected.size > 0 && (
              <span class="bulk-actions">
                {canBulkEdit && (
                  <button type="button" class="secondary small" onClick={() => setBulkEditing(true)}>
                    Edit selected ({selected.size})
                  </button>
                )}
                {canDelete && (
                  <button type="button" class="danger small" onClick={() => setConfirming(true)}>
                    Delete selected ({selected.size})
                  </button>
                )}
              </span>
            )}
          </div>
          <div class="table-wrap" aria-busy={loading ? 'true' : undefined}>
            <RecordsTable
              slug={slug}
              description={description}
              rows={rows}
              columns={cols}
              view={view}
              references={references}
              selectable={selectable}
              busy={loading}
              selected={selected}
              onSelect={setSelected}
              onSort={(c) => show({ ...firstPage(view), sort: c, order: view.sort === c && view.order === 'asc' ? 'desc' : 'asc' })}
              onResize={(c, width) => {
                const widths = { ...view.widths };
                if (width === undefined) delete widths[c];
                else widths[c] = width;
                show({ ...view, widths }, { replace: true });
              }}
              onRecord={live.put}
              caption={`${slug}: ${rows.length} of ${total}`}
            />
          </div>
          {list.records.length === 0 && live.added.length === 0 && (
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
          <RequestPanel path={path} query={list.query} cost={list.cost} timing={list.timing} charts={chartCalls} />
        </>
      )}
      {description && !list && !error && <Loading label={`Loading ${slug}`} />}
      {choosing && description && <ColumnsDialog all={all} view={view} onChange={(next) => show(next, { replace: true })} onClose={() => setChoosing(false)} />}
      {exporting && description && list && (
        <ExportDialog slug={slug} description={description} query={query} total={list.pagination.total} format={exporting} onClose={() => setExporting(undefined)} />
      )}
      {importing && description && <ImportDialog slug={slug} description={description} onClose={() => setImporting(false)} onDone={() => setReload((n) => n + 1)} />}
      {bulkEditing && description && (
        <BulkEditDialog
          slug={slug}
          description={description}
          ids={[...selected]}
          onClose={() => setBulkEditing(false)}
          onDone={() => {
            setBulkEditing(false);
            setReload((n) => n + 1);
          }}
        />
      )}
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

/**
 * One field set to one value on every selected record: a bulk update (PATCH /api/v1/{entity},
 * one request for up to 100 records), its toast offering Undo. Refusals are listed in the dialog
 * when nothing was updated, else counted in the toast.
 */
function BulkEditDialog({ slug, description, ids, onClose, onDone }: { slug: string; description: EntityDescription; ids: string[]; onClose: () => void; onDone: () => void }) {
  const fields = formFields(description);
  const [name, setName] = useState(fields[0]?.name ?? '');
  const field = fields.find((f) => f.name === name);
  const [value, setValue] = useState<FormValue>('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string>();
  // An empty value removes the field from every record: the button says so rather than "Update".
  const clearing = field !== undefined && field.kind !== 'checkbox' && (value === '' || (Array.isArray(value) && value.length === 0));

  function choose(next: string) {
    setName(next);
    const f = fields.find((x) => x.name === next);
    setValue(f?.kind === 'checkbox' ? false : f?.kind === 'relations' ? [] : '');
  }

  async function apply(e: Event) {
    e.preventDefault();
    if (!field) return;
    setBusy(true);
    setFailure(undefined);
    try {
      // Against no original: an empty value is sent as null (the field removed), as the form does.
      const change = toBody([field], { [field.name]: value }, {});
      const { body } = await unwrap<{ data: { updated: number; failed: number; operationId?: string; failures?: { id?: string; error: string }[] } }>(
        client.PATCH(collectionPath(slug), { body: { updates: ids.map((id) => ({ id, ...change })) } as never }),
      );
      const { updated, failed, failures = [] } = body.data;
      if (!updated && failed) {
        setFailure(`No ${slug} updated: ${failures.slice(0, 5).map((f) => `${f.id ?? ''} ${f.error}`.trim()).join('; ')}`);
        return;
      }
      offerUndo(bulkText('Updated', updated, slug, failed), [body.data.operationId], onDone);
      onDone();
    } catch (err) {
      setFailure(err instanceof ApiFailure ? `${err.message}${Object.keys(err.details).length ? `: ${Object.entries(err.details).map(([k, v]) => `${k} ${v}`).join('; ')}` : ''}` : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title={`Edit ${ids.length} ${slug}`} onClose={onClose}>
      <form onSubmit={apply} noValidate>
        <label for="bulk-field">Field to set</label>
        <select id="bulk-field" value={name} onChange={(e) => choose(e.currentTarget.value)}>
          {fields.map((f) => (
            <option key={f.name} value={f.name}>
              {f.name}
            </option>
          ))}
        </select>
        {field && <Field key={field.name} field={{ ...field, required: false }} value={value} onChange={setValue} />}
        {failure && <ErrorText message={failure} />}
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>{' '}
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy || !field}>
            {clearing ? `Clear ${name} on` : 'Update'} {ids.length} {ids.length === 1 ? 'record' : 'records'}
          </button>
        </footer>
      </form>
    </Modal>
  );
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
    onChange({ ...firstPage(view), search: search.trim(), filters: rows.filter((r) => r.field) });
  }
  const update = (i: number, patch: Partial<FilterRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  return (
    // <search>, not role="search": Pico draws [role=search] as one pill-shaped group.
    <search class="toolbar" aria-label="Search and filter">
    <form onSubmit={apply}>
      <div class="toolbar-row">
        <input type="search" name="search" aria-label="Search" placeholder="Search…" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <label class="inline">
          <span>Page size</span>
          <select aria-label="Page size" value={String(view.limit)} onChange={(e) => onChange({ ...firstPage(view), limit: Number(e.currentTarget.value) })}>
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
          <button type="button" class="secondary outline small" onClick={() => onChange({ ...firstPage(view), search: '', filters: [] })}>
            Clear search and filters
          </button>
        </fieldset>
      )}
    </form>
    </search>
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

function RequestPanel({ path, query, cost, timing, charts }: { path: string; query: Record<string, string>; cost: string | null; timing: string | null; charts: ChartCall[] }) {
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
        {charts.map((call) => (
          <Fragment key={call.label}>
            <dt>{call.label} (aggregate)</dt>
            <dd>
              <pre>
                <code>{curlCommand(location.origin, `${basePath}${call.path}`, call.query)}</code>
              </pre>
              X-Request-Cost: <code>{call.cost ?? 'not reported'}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
    </details>
  );
}

