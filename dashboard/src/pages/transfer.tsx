/**
 * Import into an entity (CSV or JSON, with a preview, per-row errors from the server and a
 * progress bar over batches of 100) and export of the explorer's current view (CSV or NDJSON,
 * every page of it by cursor, with a progress bar and a cancel button). Both say before they
 * start how many requests they take and about how long, and pace themselves within the session's
 * rate-limit window: they leave a reserve for the user's other pages, wait for the window's reset
 * when they need more (saying when they go on), and wait out a 429 the same way.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, budget, callMs, client, collectionPath, unwrap, type ApiRecord, type Pagination } from '../api.js';
import { clock, count, duration, mustPause, plan, reserveOf, windowMs } from '../budget.js';
import { columns as columnsOf, type EntityDescription } from '../form.js';
import { csvPage, EXPORT_PAGE, exportRequests, IMPORT_BATCH, importRequests, parseRows, readUnits, toItem, toNdjson } from '../transfer.js';
import { flash } from '../state.js';
import { ErrorText, Modal } from '../ui.js';
import { bulkText } from '../history.js';
import { offerUndo } from '../undo.js';

/** What a transfer of `requests` requests costs and takes, said before it starts. */
function PlanText({ requests, what, windowText }: { requests: number; what: string; windowText?: string }) {
  const b = budget.value;
  const p = plan(requests, b, callMs.value, windowMs(windowText));
  const reset = p.resetAt ? clock(p.resetAt, true) : '';
  const left = b && b.resetAt > Date.now() ? b.remaining : b?.limit;
  return (
    <p class="plan">
      {what}: <strong>{requests}</strong> {requests === 1 ? 'request' : 'requests'} of your session's rate-limit window, about <strong>{duration(p.ms)}</strong>.
      {b && ` The window has ${count(left!)} of ${count(b.limit)} left until ${reset}.`}
      {b && p.waits > 0 &&
        ` It sends ${p.now} now, keeping ${reserveOf(b.limit)} for your other pages, then waits for the window to reset at ${reset}${p.waits > 1 ? ` (and ${p.waits - 1} more ${p.waits === 2 ? 'reset' : 'resets'})` : ''} and goes on by itself.`}
    </p>
  );
}

interface RowError {
  row: number;
  error: string;
}

/** POST /api/v1/import/{slug}: the tasks variant ({tasks}) for tasks, the generic one ({items, options}) otherwise. */
async function importBatch(slug: string, items: Record<string, unknown>[]): Promise<{ created: number; failures: { index: number; error: string }[]; operationId?: string }> {
  if (slug === 'tasks') {
    const { body } = await unwrap<{ data: { imported: number; errors: { index: number; error: string }[]; operationId?: string } }>(
      client.POST('/api/v1/import/tasks', { body: { tasks: items } as never }),
    );
    return { created: body.data.imported, failures: body.data.errors, operationId: body.data.operationId };
  }
  const path = `/api/v1/import/${slug}` as '/api/v1/import/products';
  const { body } = await unwrap<{ data: { created: number; failures?: { index: number; error: string }[]; operationId?: string } }>(
    client.POST(path, { body: { items, options: { skipInvalid: true, returnFailures: true } } as never }),
  );
  return { created: body.data.created, failures: body.data.failures ?? [], operationId: body.data.operationId };
}

export function ImportDialog({ slug, description, onClose, onDone }: { slug: string; description: EntityDescription; onClose: () => void; onDone: () => void }) {
  const [rows, setRows] = useState<Record<string, unknown>[]>();
  const [fileName, setFileName] = useState('');
  const [parseError, setParseError] = useState<string>();
  const [progress, setProgress] = useState<{ done: number; total: number; resumesAt?: Date }>();
  const [result, setResult] = useState<{ created: number; errors: RowError[] }>();
  const [failure, setFailure] = useState<ApiFailure>();
  const controller = useRef<AbortController | undefined>(undefined);
  // Closing the dialog (Escape included) stops an import between batches.
  useEffect(() => () => controller.current?.abort(), []);

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
    // One bulk call per batch: Undo reverts them all.
    const operations: (string | undefined)[] = [];
    const abort = (controller.current = new AbortController());
    setProgress({ done: 0, total: items.length });
    try {
      for (let offset = 0; offset < items.length; ) {
        await paced(abort.signal, (until) => setProgress({ done: offset, total: items.length, resumesAt: until }));
        let batch: Awaited<ReturnType<typeof importBatch>>;
        try {
          batch = await importBatch(slug, items.slice(offset, offset + IMPORT_BATCH));
        } catch (e) {
          // A 429 wrote nothing: the same batch goes again when the window resets.
          if (e instanceof ApiFailure && e.status === 429) {
            await waitOut(e, abort.signal, (until) => setProgress({ done: offset, total: items.length, resumesAt: until }));
            continue;
          }
          throw e;
        }
        created += batch.created;
        if (batch.created) operations.push(batch.operationId);
        // Row numbers as in the file: 1 is the first record (after a CSV's header row).
        errors.push(...batch.failures.map((f) => ({ row: offset + f.index + 1, error: f.error })));
        offset += IMPORT_BATCH;
        setProgress({ done: Math.min(items.length, offset), total: items.length });
      }
    } catch (e) {
      if (!(e instanceof Cancelled)) setFailure(e as ApiFailure);
    } finally {
      controller.current = undefined;
    }
    setResult({ created, errors });
    if (created) {
      offerUndo(bulkText('Imported', created, slug, errors.length), operations, onDone);
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
          {!progress && <PlanText requests={importRequests(rows.length)} what={`${rows.length} ${rows.length === 1 ? 'record' : 'records'} in batches of ${IMPORT_BATCH}`} windowText={description.rateLimit?.window} />}
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
          {progress.resumesAt && !result && <p role="status">The import waits for the session's rate-limit window to reset: it goes on at {clock(progress.resumesAt.getTime(), true)}.</p>}
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

/** Waits `seconds`, or rejects with Cancelled as soon as the transfer is cancelled. */
function pause(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Cancelled());
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Cancelled());
      },
      { once: true },
    );
  });
}

/**
 * Before a transfer's next request: when the window is down to the reserve it keeps for the
 * user's other pages, wait for the reset (saying until when) instead of spending it.
 */
async function paced(signal: AbortSignal, onWait: (until: Date | undefined) => void): Promise<void> {
  const b = budget.value;
  if (!mustPause(b)) return;
  onWait(new Date(b!.resetAt));
  await pause((b!.resetAt - Date.now()) / 1000 + 0.25, signal);
  onWait(undefined);
}

/** A 429 anyway (another tab, another container's tokens): wait for its Retry-After, saying until when. */
async function waitOut(e: ApiFailure, signal: AbortSignal, onWait: (until: Date | undefined) => void): Promise<void> {
  const seconds = Math.max(1, e.retryAfter ?? 60);
  onWait(new Date(Date.now() + seconds * 1000));
  await pause(seconds, signal);
  onWait(undefined);
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
 * which the browser may keep on disk), so memory does not grow with the records. The walk pauses
 * at the window's reserve (or on a 429) until the window resets, then goes on from the same cursor.
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
    const waiting = (until: Date | undefined) => onProgress({ ...progress, resumesAt: until });
    await paced(signal, waiting);
    try {
      answer = await unwrap(client.GET(collectionPath(slug), { params: { query: page as never }, signal } as never));
    } catch (e) {
      if (signal.aborted) throw new Cancelled();
      if (e instanceof ApiFailure && e.status === 429) {
        await waitOut(e, signal, waiting);
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
  const requests = exportRequests(total);
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
        <PlanText requests={requests} what={`${total} ${total === 1 ? 'record' : 'records'} in this view (its filter, search and sort), read ${EXPORT_PAGE} at a time`} windowText={description.rateLimit?.window} />
      )}
      {shown && (
        <div class="progress">
          <label for="export-progress">
            {shown.records} of {shown.total} records exported ({shown.requests} {shown.requests === 1 ? 'request' : 'requests'})
          </label>
          <progress id="export-progress" value={shown.records} max={Math.max(1, shown.total)} />
          {running && progress?.resumesAt && (
            <p role="status">The export waits for the session's rate-limit window to reset: it goes on at {clock(progress.resumesAt.getTime(), true)}.</p>
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
