/**
 * Import into an entity (CSV or JSON, with a preview, per-row errors from the server and a
 * progress bar over batches of 100) and export of the explorer's current view (CSV or NDJSON,
 * every page of it by cursor, with its cost shown first, a progress bar, and a cancel button).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, client, collectionPath, lastCall, unwrap, type ApiRecord, type Pagination } from '../api.js';
import { columns as columnsOf, type EntityDescription } from '../form.js';
import { flash } from '../state.js';
import { csvPage, EXPORT_PAGE, exportCost, IMPORT_BATCH, parseRows, readUnits, toItem, toNdjson } from '../transfer.js';
import { ErrorText, Modal } from '../ui.js';

interface RowError {
  row: number;
  error: string;
}

/** POST /api/v1/import/{slug}: the tasks variant ({tasks}) for tasks, the generic one ({items, options}) otherwise. */
async function importBatch(slug: string, items: Record<string, unknown>[]): Promise<{ created: number; failures: { index: number; error: string }[] }> {
  if (slug === 'tasks') {
    const { body } = await unwrap<{ data: { imported: number; errors: { index: number; error: string }[] } }>(client.POST('/api/v1/import/tasks', { body: { tasks: items } as never }));
    return { created: body.data.imported, failures: body.data.errors };
  }
  const path = `/api/v1/import/${slug}` as '/api/v1/import/products';
  const { body } = await unwrap<{ data: { created: number; failures?: { index: number; error: string }[] } }>(
    client.POST(path, { body: { items, options: { skipInvalid: true, returnFailures: true } } as never }),
  );
  return { created: body.data.created, failures: body.data.failures ?? [] };
}

export function ImportDialog({ slug, description, onClose, onDone }: { slug: string; description: EntityDescription; onClose: () => void; onDone: () => void }) {
  const [rows, setRows] = useState<Record<string, unknown>[]>();
  const [fileName, setFileName] = useState('');
  const [parseError, setParseError] = useState<string>();
  const [progress, setProgress] = useState<{ done: number; total: number }>();
  const [result, setResult] = useState<{ created: number; errors: RowError[] }>();
  const [failure, setFailure] = useState<ApiFailure>();

  async function choose(file: File) {
    setResult(undefined);
    setFailure(undefined);
    setFileName(file.name);
    const parsed = parseRows(file.name, await file.text());
    setParseError(parsed.error);
    setRows(parsed.rows);
  }

  async function start() {
    if (!rows) return;
    const items = rows.map((r) => toItem(r, description));
    let created = 0;
    const errors: RowError[] = [];
    setProgress({ done: 0, total: items.length });
    try {
      for (let offset = 0; offset < items.length; offset += IMPORT_BATCH) {
        const batch = await importBatch(slug, items.slice(offset, offset + IMPORT_BATCH));
        created += batch.created;
        // Row numbers as in the file: 1 is the first record (after a CSV's header row).
        errors.push(...batch.failures.map((f) => ({ row: offset + f.index + 1, error: f.error })));
        setProgress({ done: Math.min(items.length, offset + IMPORT_BATCH), total: items.length });
      }
    } catch (e) {
      setFailure(e as ApiFailure);
    }
    setResult({ created, errors });
    if (created) {
      flash(`Imported ${created} ${slug}${errors.length ? `; ${errors.length} rows were refused` : ''}.`);
      onDone();
    }
  }

  const preview = rows?.slice(0, 5) ?? [];
  const headers = [...new Set(preview.flatMap((r) => Object.keys(r)))];
  return (
    <Modal title={`Import ${slug}`} onClose={onClose}>
      <label for="import-file">CSV or JSON file</label>
      <input id="import-file" type="file" accept=".csv,.json,.ndjson,text/csv,application/json" aria-describedby="import-hint" onChange={(e) => e.currentTarget.files?.[0] && choose(e.currentTarget.files[0])} />
      <small id="import-hint">CSV with a header row naming the fields (lists separated by “;”), a JSON array of objects, or NDJSON. Sent in batches of {IMPORT_BATCH}.</small>
      {parseError && <ErrorText message={`${fileName}: ${parseError}`} />}
      {rows && rows.length > 0 && !result && (
        <>
          <p>
            {rows.length} {rows.length === 1 ? 'record' : 'records'} in {fileName}; the first {preview.length}:
          </p>
          <div class="table-wrap">
            <table class="striped">
              <caption class="visually-hidden">Preview of {fileName}</caption>
              <thead>
                <tr>
                  <th scope="col">row</th>
                  {headers.map((h) => (
                    <th key={h} scope="col">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {preview.map((r, i) => (
                  <tr key={i}>
                    <td>{i + 1}</td>
                    {headers.map((h) => (
                      <td key={h}>{typeof r[h] === 'object' ? JSON.stringify(r[h]) : String(r[h] ?? '')}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {progress && (
        <div class="progress">
          <label for="import-progress">
            Imported batches: {progress.done} of {progress.total} records sent
          </label>
          <progress id="import-progress" value={progress.done} max={progress.total} />
        </div>
      )}
      {failure && <ErrorText message={failure.message} code={failure.code} />}
      {result && (
        <div role="status">
          <p>
            <strong>{result.created}</strong> created, <strong>{result.errors.length}</strong> refused.
          </p>
          {result.errors.length > 0 && (
            <ul class="row-errors" aria-label="Refused rows">
              {result.errors.map((e) => (
                <li key={e.row}>
                  Row {e.row}: {e.error}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <footer>
        <button type="button" class="secondary" onClick={onClose}>
          {result ? 'Close' : 'Cancel'}
        </button>{' '}
        {!result && (
          <button type="button" disabled={!rows?.length || Boolean(progress)} aria-busy={progress ? 'true' : undefined} onClick={start}>
            Import {rows?.length ?? 0} records
          </button>
        )}
      </footer>
    </Modal>
  );
}

function download(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

class Cancelled extends Error {}

/** Waits `seconds`, or rejects with Cancelled as soon as the export is cancelled. */
function pause(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Cancelled());
    }, { once: true });
  });
}

interface ExportProgress {
  records: number;
  total: number;
  requests: number;
  readUnits: number;
  /** While the session's rate limit is used up: when the export goes on. */
  resumesAt?: Date;
}

/**
 * Every record of the view (its filter, search and sort), page after page by cursor, EXPORT_PAGE
 * at a time. Each page is written out as text at once and only that text is kept (a Blob part,
 * which the browser may keep on disk), so memory does not grow with the records. A 429 pauses
 * the walk until the window resets (Retry-After), then it goes on from the same cursor.
 */
async function walkView(
  slug: string,
  description: EntityDescription,
  query: Record<string, string>,
  format: 'csv' | 'ndjson',
  signal: AbortSignal,
  onProgress: (p: ExportProgress) => void,
): Promise<{ blob: Blob; progress: ExportProgress }> {
  const columns = columnsOf(description);
  const { cursor: _shown, limit: _limit, ...view } = query;
  void _shown;
  void _limit;
  const parts: Blob[] = [];
  const progress: ExportProgress = { records: 0, total: 0, requests: 0, readUnits: 0 };
  let cursor: string | undefined;
  do {
    const page: Record<string, string> = { ...view, limit: String(EXPORT_PAGE), ...(cursor ? { cursor } : {}) };
    let answer: { body: { data: ApiRecord[]; pagination: Pagination }; response: Response };
    try {
      answer = await unwrap(client.GET(collectionPath(slug), { params: { query: page as never }, signal } as never));
    } catch (e) {
      if (signal.aborted) throw new Cancelled();
      if (e instanceof ApiFailure && e.status === 429) {
        const seconds = Math.max(1, e.retryAfter ?? 60);
        onProgress({ ...progress, resumesAt: new Date(Date.now() + seconds * 1000) });
        await pause(seconds, signal);
        continue;
      }
      throw e;
    }
    const { data, pagination } = answer.body;
    parts.push(new Blob([format === 'csv' ? csvPage(data, columns, progress.requests === 0) : toNdjson(data)]));
    progress.requests += 1;
    progress.records += data.length;
    progress.total = Math.max(pagination.total, progress.records);
    progress.readUnits += readUnits(answer.response.headers.get('X-Request-Cost'));
    onProgress({ ...progress });
    cursor = pagination.hasNext && pagination.nextCursor ? pagination.nextCursor : undefined;
  } while (cursor);
  return { blob: new Blob(parts, { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }), progress };
}

/**
 * Export of the explorer's current view: what it costs (requests of the session's hourly budget)
 * before it starts, a progress bar while it runs, cancellable at any time (nothing is saved then).
 */
export function ExportDialog({ slug, description, query, total, format, onClose }: { slug: string; description: EntityDescription; query: Record<string, string>; total: number; format: 'csv' | 'ndjson'; onClose: () => void }) {
  const [progress, setProgress] = useState<ExportProgress>();
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<{ done: boolean; progress: ExportProgress }>();
  const [failure, setFailure] = useState<ApiFailure>();
  const controller = useRef<AbortController | undefined>(undefined);
  const latest = useRef<ExportProgress | undefined>(undefined);
  const remaining = lastCall.value?.rateLimitRemaining ? Number(lastCall.value.rateLimitRemaining) : undefined;
  const cost = exportCost(total, remaining);
  const label = format.toUpperCase();

  // Closing the dialog (Escape included) cancels a running export.
  useEffect(() => () => controller.current?.abort(), []);

  async function start() {
    const abort = (controller.current = new AbortController());
    setRunning(true);
    setFailure(undefined);
    const report = (p: ExportProgress) => {
      latest.current = p;
      setProgress(p);
    };
    report({ records: 0, total, requests: 0, readUnits: 0 });
    try {
      const { blob, progress: final } = await walkView(slug, description, query, format, abort.signal, report);
      const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
      download(`${slug}-${stamp}.${format}`, blob);
      setResult({ done: true, progress: final });
      flash(`Exported ${final.records} ${slug} as ${label}.`);
    } catch (e) {
      if (e instanceof Cancelled) setResult({ done: false, progress: progressOf(latest.current) });
      else setFailure(e as ApiFailure);
    } finally {
      setRunning(false);
      controller.current = undefined;
    }
  }

  function cancel() {
    controller.current?.abort();
  }

  const shown = result?.progress ?? progress;
  return (
    <Modal title={`Export ${slug} as ${label}`} onClose={onClose}>
      {!running && !result && (
        <p>
          {total} {total === 1 ? 'record' : 'records'} in this view (its filter, search and sort), read {EXPORT_PAGE} at a time: about <strong>{cost.requests}</strong> {cost.requests === 1 ? 'request' : 'requests'} of your session's hourly limit
          {remaining !== undefined ? `, which has ${remaining} left` : ''}.
          {!cost.fits && ' The export pauses when the limit is reached and goes on by itself when the window resets.'}
        </p>
      )}
      {shown && (
        <div class="progress">
          <label for="export-progress">
            {shown.records} of {shown.total} records exported ({shown.requests} {shown.requests === 1 ? 'request' : 'requests'})
          </label>
          <progress id="export-progress" value={shown.records} max={Math.max(1, shown.total)} />
          {running && progress?.resumesAt && (
            <p role="status">The session's rate limit is used up: the export goes on at {progress.resumesAt.toLocaleTimeString()}.</p>
          )}
        </div>
      )}
      {failure && <ErrorText message={failure.message} code={failure.code} />}
      {result && (
        <p role="status">
          {result.done
            ? `Exported ${result.progress.records} records in ${result.progress.requests} ${result.progress.requests === 1 ? 'request' : 'requests'} (${result.progress.readUnits.toFixed(1)} read units).`
            : `Export cancelled after ${result.progress.records} records; nothing was saved.`}
        </p>
      )}
      <footer>
        {running ? (
          <button type="button" class="secondary" onClick={cancel}>
            Cancel export
          </button>
        ) : (
          <>
            <button type="button" class="secondary" onClick={onClose}>
              {result || failure ? 'Close' : 'Cancel'}
            </button>{' '}
            {!result && (
              <button type="button" onClick={start}>
                {failure ? 'Try again' : 'Start export'}
              </button>
            )}
          </>
        )}
      </footer>
    </Modal>
  );
}

function progressOf(p: ExportProgress | undefined): ExportProgress {
  return p ?? { records: 0, total: 0, requests: 0, readUnits: 0 };
}
