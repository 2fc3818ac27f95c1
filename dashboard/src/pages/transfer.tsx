/**
 * Import into an entity (CSV or JSON, with a preview, per-row errors from the server and a
 * progress bar over batches of 100) and export of the explorer's current view (CSV or NDJSON).
 */
import { useState } from 'preact/hooks';
import { ApiFailure, client, collectionPath, unwrap, type ApiRecord, type Pagination } from '../api.js';
import { columns as columnsOf, type EntityDescription } from '../form.js';
import { flash } from '../state.js';
import { IMPORT_BATCH, parseRows, toCsv, toItem, toNdjson } from '../transfer.js';
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

/** At most this many records are exported (pages of 100: each page is one request of the session's budget). */
export const EXPORT_MAX = 1000;

function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Every record of the view (its filter, search and sort), from the first page, up to EXPORT_MAX. */
export async function exportView(slug: string, description: EntityDescription, query: Record<string, string>, format: 'csv' | 'ndjson'): Promise<number> {
  const records: ApiRecord[] = [];
  let cursor: string | undefined;
  do {
    const { cursor: _drop, ...rest } = query;
    void _drop;
    const page: Record<string, string> = { ...rest, limit: '100', ...(cursor ? { cursor } : {}) };
    const { body } = await unwrap<{ data: ApiRecord[]; pagination: Pagination }>(client.GET(collectionPath(slug), { params: { query: page as never } }));
    records.push(...body.data);
    cursor = body.pagination.hasNext && body.pagination.nextCursor ? body.pagination.nextCursor : undefined;
  } while (cursor && records.length < EXPORT_MAX);
  const rows = records.slice(0, EXPORT_MAX);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  if (format === 'csv') download(`${slug}-${stamp}.csv`, 'text/csv', toCsv(rows, columnsOf(description)));
  else download(`${slug}-${stamp}.ndjson`, 'application/x-ndjson', toNdjson(rows));
  return rows.length;
}
