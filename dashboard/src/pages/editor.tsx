/**
 * The record editor: create and edit forms generated from the entity's OPTIONS description
 * (form.ts), the server's 422 details next to each field (as its accessible description),
 * If-Match on save with a 412 explained, and delete with confirmation.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, client, collectionPath, recordPath, unwrap, type ApiRecord } from '../api.js';
import { formFields, initialValues, parseMetadata, toBody, type EntityDescription, type FormField, type FormValues } from '../form.js';
import { href, navigate, route } from '../router.js';
import { describe, flash, historyEntities, pagePath } from '../state.js';
import { labelOf } from '../labels.js';
import { book } from '../lookup.js';
import { Confirm, ErrorText, Loading } from '../ui.js';
import { HistoryPanel } from './history.js';

interface Loaded {
  description: EntityDescription;
  fields: FormField[];
  record?: ApiRecord;
  etag?: string;
  original?: FormValues;
  metadata: string;
}

function metadataText(record?: ApiRecord): string {
  const m = record?.metadata;
  return m && typeof m === 'object' && Object.keys(m).length ? JSON.stringify(m, null, 2) : '';
}

type Choice = { id: string; label: string };

/** Choices are kept for a few minutes: opening one record after another costs no picker request. */
const CHOICES_TTL_MS = 5 * 60_000;
const choiceCache = new Map<string, { at: number; pending: Promise<Choice[]> }>();

function loadChoices(entity: string): Promise<Choice[]> {
  const cached = choiceCache.get(entity);
  if (cached && Date.now() - cached.at < CHOICES_TTL_MS) return cached.pending;
  const pending = unwrap<{ data: Record<string, unknown>[] }>(client.GET(collectionPath(entity), { params: { query: { limit: 100 } as never } })).then(({ body }) => {
    // The table shows these records' labels too: what a picker read is not looked up again.
    book.learn(entity, body.data);
    return body.data.map((r) => {
      const label = labelOf(r);
      return { id: String(r.id), label: label ? `${label} (${String(r.id)})` : String(r.id) };
    });
  });
  pending.catch(() => choiceCache.delete(entity));
  choiceCache.set(entity, { at: Date.now(), pending });
  return pending;
}

/** A relation picker's choices: up to 100 records of the related entity, labelled by their first text field. */
function useChoices(entity?: string): { choices?: Choice[]; error?: string } {
  const [state, setState] = useState<{ choices?: Choice[]; error?: string }>({});
  useEffect(() => {
    if (!entity) return;
    loadChoices(entity).then(
      (choices) => setState({ choices }),
      (e: Error) => setState({ error: e.message }),
    );
  }, [entity]);
  return state;
}

export function Editor({ slug, id }: { slug: string; id?: string }) {
  const [loaded, setLoaded] = useState<Loaded>();
  const [loadError, setLoadError] = useState<Error>();
  const [values, setValues] = useState<FormValues>({});
  const [metadata, setMetadata] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<ApiFailure>();
  const [conflict, setConflict] = useState(false);
  const [busy, setBusy] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);

  async function load(keep?: FormValues) {
    const description = await describe(slug);
    const fields = formFields(description);
    let record: ApiRecord | undefined;
    let etag: string | undefined;
    if (id) {
      const { body, response } = await unwrap<{ data: ApiRecord }>(client.GET(recordPath(slug), { params: { path: { id }, query: { includeMetadata: 'true' } as never } }));
      record = body.data;
      etag = response.headers.get('ETag') ?? undefined;
    }
    const original = initialValues(fields, record);
    setLoaded({ description, fields, record, etag, original, metadata: metadataText(record) });
    setValues(keep ? { ...original, ...keep } : original);
    if (!keep) setMetadata(metadataText(record));
  }

  useEffect(() => {
    load().catch(setLoadError);
  }, [slug, id]);

  if (loadError) return <ErrorText error={loadError} />;
  if (!loaded) return <Loading label={id ? `Loading ${id}` : 'Loading the form'} />;
  const { description, fields, record } = loaded;
  const softDelete = 'deletedAt' in description.schema;
  const canDelete = id && description.permissions.delete && description.methods.includes('DELETE');
  // An existing record of an entity that keeps revisions has a History tab (#/<entity>/<id>?tab=history).
  const withHistory = Boolean(id && historyEntities.value?.includes(slug));
  const historyTab = withHistory && route.value.params.get('tab') === 'history';

  async function save(e: Event) {
    e.preventDefault();
    setErrors({});
    setFailure(undefined);
    setConflict(false);
    const meta = parseMetadata(metadata);
    if (meta.error) {
      setErrors({ metadata: meta.error });
      return;
    }
    const body = toBody(fields, values, id ? loaded!.original : undefined);
    const metadataChanged = metadata.trim() !== loaded!.metadata.trim();
    if (meta.value && (!id || metadataChanged)) body.metadata = meta.value;
    setBusy(true);
    try {
      if (id) {
        const { body: answer, response } = await unwrap<{ data: ApiRecord }>(
          client.PATCH(recordPath(slug), {
            params: { path: { id }, query: (metadataChanged ? { replaceMetadata: 'true' } : {}) as never, header: (loaded!.etag ? { 'If-Match': loaded!.etag } : {}) as never },
            body: body as never,
          }),
        );
        const record = { ...answer.data, metadata: meta.value ?? {} } as ApiRecord;
        const original = initialValues(fields, record);
        setLoaded({ ...loaded!, record, etag: response.headers.get('ETag') ?? loaded!.etag, original, metadata: metadataText(record) });
        setValues(original);
        flash(`Saved ${id}.`);
      } else {
        const { body: answer } = await unwrap<{ data: ApiRecord }>(client.POST(collectionPath(slug), { body: body as never }));
        flash(`Created ${answer.data.id}.`, 'success', pagePath([slug, answer.data.id]));
        navigate(`${slug}/${encodeURIComponent(answer.data.id)}`);
      }
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) setConflict(true);
      else if (err instanceof ApiFailure) {
        setErrors(err.details);
        setFailure(err);
      } else setFailure(new ApiFailure(0, 'ERROR', String(err)));
    } finally {
      setBusy(false);
    }
  }

  async function reloadAndReapply() {
    // The user's edits (what differs from the version they started from) go on top of the new version.
    const mine = Object.fromEntries(Object.entries(values).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(loaded!.original?.[k])));
    setConflict(false);
    await load(mine).catch(setLoadError);
    flash('Reloaded the latest version; your changes are applied on top of it. Review them and save again.', 'info');
  }

  /** A version restored from the History tab: the form shows the record as it is now, with its new ETag. */
  function restored(record: ApiRecord, etag?: string) {
    const original = initialValues(fields, record);
    setLoaded({ ...loaded!, record, etag: etag ?? loaded!.etag, original, metadata: metadataText(record) });
    setValues(original);
    setMetadata(metadataText(record));
    setConflict(false);
    setFailure(undefined);
    setErrors({});
  }

  async function remove() {
    setBusy(true);
    try {
      await unwrap(client.DELETE(recordPath(slug), { params: { path: { id: id! } } }));
      flash(softDelete ? `${id} was soft-deleted: it has a deletedAt time and no longer appears in lists.` : `${id} was deleted.`, 'success', pagePath([slug]));
      navigate(slug);
    } catch (err) {
      setFailure(err as ApiFailure);
      setConfirmDelete(false);
    } finally {
      setBusy(false);
    }
  }

  const generalErrors = failure && Object.keys(failure.details).filter((k) => !fields.some((f) => f.name === k) && k !== 'metadata');

  return (
    <section class="editor">
      <nav aria-label="breadcrumb" class="crumbs">
        <ul>
          <li>
            <a href={href(slug)}>{slug}</a>
          </li>
          <li>{id ?? 'new'}</li>
        </ul>
      </nav>
      <h1>{id ? `Edit ${description.entity} ${id}` : `New ${description.entity}`}</h1>
      {record && (
        <p class="muted">
          Created {String(record.createdAt)} · updated {String(record.updatedAt)}
        </p>
      )}
      {conflict && (
        <div role="alert" class="conflict">
          <p>
            <strong>This record was changed by someone else</strong> since you opened it (412 Precondition Failed: your If-Match no longer matches). Your changes were not saved.
          </p>
          <button type="button" onClick={reloadAndReapply}>
            Reload and re-apply my changes
          </button>{' '}
          <button type="button" class="secondary outline" onClick={() => load().catch(setLoadError)}>
            Discard my changes
          </button>
        </div>
      )}
      {failure && (
        <ErrorText
          message={`${failure.message}${generalErrors && generalErrors.length ? `: ${generalErrors.map((k) => `${k} ${failure.details[k]}`).join('; ')}` : ''}`}
          code={failure.code}
        />
      )}
      {withHistory && <Tabs history={historyTab} slug={slug} id={id!} />}
      <div {...(withHistory ? { role: 'tabpanel', id: 'panel-details', 'aria-labelledby': 'tab-details' } : {})} hidden={historyTab}>
        <form onSubmit={save} noValidate>
          {fields.map((f) => (
            <Field key={f.name} field={f} value={values[f.name]} error={errors[f.name]} onChange={(v) => setValues({ ...values, [f.name]: v })} />
          ))}
          <label for="f-metadata">metadata</label>
          <textarea
            id="f-metadata"
            rows={4}
            class="mono"
            placeholder='{"key": "value"}'
            value={metadata}
            aria-invalid={errors.metadata ? 'true' : undefined}
            aria-describedby={errors.metadata ? 'e-metadata' : 'h-metadata'}
            onInput={(e) => setMetadata(e.currentTarget.value)}
          />
          {errors.metadata ? (
            <small id="e-metadata" class="field-error">
              {errors.metadata}
            </small>
          ) : (
            <small id="h-metadata">A JSON object stored with the record (optional).</small>
          )}
          <div class="actions">
            <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
              Save
            </button>
            <a href={href(slug)} role="button" class="secondary outline">
              Cancel
            </a>
            {canDelete && (
              <button type="button" class="danger outline" onClick={() => setConfirmDelete(true)}>
                Delete
              </button>
            )}
          </div>
        </form>
      </div>
      {withHistory && (
        <div role="tabpanel" id="panel-history" aria-labelledby="tab-history" hidden={!historyTab}>
          {historyTab && (
            <HistoryPanel
              slug={slug}
              id={id!}
              order={Object.keys(description.schema)}
              etag={loaded.etag}
              onRestored={restored}
              onReload={() => load().catch(setLoadError)}
            />
          )}
        </div>
      )}
      {confirmDelete && (
        <Confirm
          title={`Delete ${id}?`}
          text={softDelete ? `${slug} are soft-deleted: the record gets a deletedAt time and leaves every list and read.` : 'The record is deleted permanently.'}
          action="Delete"
          busy={busy}
          onConfirm={remove}
          onClose={() => setConfirmDelete(false)}
        />
      )}
    </section>
  );
}

/** Details | History: a tab list (← → move between the tabs), the tab in the URL so it can be linked. */
function Tabs({ history, slug, id }: { history: boolean; slug: string; id: string }) {
  const go = (tab: 'details' | 'history') => {
    navigate(`${slug}/${encodeURIComponent(id)}`, tab === 'history' ? new URLSearchParams({ tab }) : undefined, { replace: true });
    requestAnimationFrame(() => document.getElementById(`tab-${tab}`)?.focus());
  };
  const keys = (e: KeyboardEvent) => {
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft' || e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      go(e.key === 'Home' ? 'details' : e.key === 'End' ? 'history' : history ? 'details' : 'history');
    }
  };
  return (
    <div role="tablist" aria-label="Record" class="tabs" onKeyDown={keys}>
      <button type="button" role="tab" id="tab-details" aria-selected={!history} aria-controls="panel-details" tabIndex={history ? -1 : 0} onClick={() => go('details')}>
        Details
      </button>
      <button type="button" role="tab" id="tab-history" aria-selected={history} aria-controls="panel-history" tabIndex={history ? 0 : -1} onClick={() => go('history')}>
        History
      </button>
    </div>
  );
}

export function Field({ field, value, error, onChange }: { field: FormField; value: FormValues[string]; error?: string; onChange: (v: FormValues[string]) => void }) {
  const id = `f-${field.name}`;
  const hintId = `h-${field.name}`;
  const errorId = `e-${field.name}`;
  const hints = [
    field.required ? 'required' : 'optional',
    field.maxLength !== undefined ? `at most ${field.maxLength} characters` : '',
    field.min !== undefined ? `≥ ${field.min}` : '',
    field.max !== undefined ? `≤ ${field.max}` : '',
    field.pattern ? `pattern ${field.pattern}` : '',
  ].filter(Boolean);
  const a11y = { id, 'aria-invalid': error ? ('true' as const) : undefined, 'aria-describedby': error ? errorId : hintId, required: field.required };
  const { choices, error: choicesError } = useChoices(field.kind === 'relation' || field.kind === 'relations' ? field.relatedEntity : undefined);

  let input;
  switch (field.kind) {
    case 'select':
      input = (
        <select {...a11y} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)}>
          {!field.required || value === '' ? <option value="">—</option> : null}
          {field.options!.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case 'checkbox':
      input = <input type="checkbox" role="switch" {...a11y} checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
      break;
    case 'number':
      input = <input type="number" step="any" {...a11y} min={field.min} max={field.max} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'datetime':
      input = <input type="datetime-local" {...a11y} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'date':
      input = <input type="date" {...a11y} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'textarea':
      input = <textarea {...a11y} rows={4} maxLength={field.maxLength} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'relation':
      input = choices ? (
        <select {...a11y} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">—</option>
          {value && !choices.some((c) => c.id === value) ? <option value={String(value)}>{String(value)}</option> : null}
          {choices.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
      ) : (
        <input {...a11y} value={String(value)} placeholder={choicesError ? `id of a ${field.relatedEntity} record` : 'Loading choices…'} onInput={(e) => onChange(e.currentTarget.value)} />
      );
      break;
    case 'relations':
      input = choices ? (
        <select
          {...a11y}
          multiple
          size={Math.min(6, Math.max(2, choices.length))}
          onChange={(e) => onChange([...e.currentTarget.selectedOptions].map((o) => o.value))}
        >
          {choices.map((c) => (
            <option key={c.id} value={c.id} selected={(value as string[]).includes(c.id)}>
              {c.label}
            </option>
          ))}
        </select>
      ) : (
        <input
          {...a11y}
          value={(value as string[]).join(',')}
          placeholder={choicesError ? 'comma-separated ids' : 'Loading choices…'}
          onInput={(e) => onChange(e.currentTarget.value.split(',').map((s) => s.trim()).filter(Boolean))}
        />
      );
      break;
    default:
      input = <input type="text" {...a11y} maxLength={field.maxLength} pattern={field.pattern} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />;
  }
  return (
    <div class="field">
      <label for={id}>
        {field.name}
        {field.required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {input}
      {error ? (
        <small id={errorId} class="field-error">
          {error}
        </small>
      ) : (
        <small id={hintId}>
          {hints.join(' · ')}
          {field.relatedEntity ? ` · a ${field.relatedEntity} record` : ''}
        </small>
      )}
    </div>
  );
}
