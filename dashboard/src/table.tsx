/**
 * The explorer's table: the chosen columns in their order and widths (resized by dragging a
 * header's edge, or with the arrow keys on it), references shown by their records' labels and
 * linked to them, live marks, and inline edit of a cell: the record is read (its ETag) when the
 * cell opens, saved with If-Match, and a 412 or 422 is handled as the form handles it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, client, recordPath, unwrap, type ApiRecord } from './api.js';
import { formFields, initialValues, toBody, type EntityDescription, type FormField, type FormValue } from './form.js';
import type { Reference } from './labels.js';
import type { Mark } from './live.js';
import { book, labelsLearnt } from './lookup.js';
import { MAX_WIDTH, MIN_WIDTH, type View } from './query.js';
import { href } from './router.js';
import { entities, flash } from './state.js';

/** The input kinds a cell edits in place; references and lists open the record's form. */
const INLINE_KINDS = new Set(['text', 'textarea', 'number', 'select', 'checkbox', 'date', 'datetime']);

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const two = (n: number) => String(n).padStart(2, '0');

/** A date-time in the browser's zone to the minute (`2026-05-01 14:03`); the stored value is the cell's title. */
export function shortTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

export interface TableProps {
  slug: string;
  description: EntityDescription;
  rows: { record: ApiRecord; mark?: Mark }[];
  columns: string[];
  view: View;
  references: Reference[];
  selectable: boolean;
  /**
   * The view's list is loading: the rows shown are still the previous view's, and the new list
   * clears the selection, so their boxes are not ticked meanwhile (a tick would silently vanish).
   */
  busy?: boolean;
  selected: Set<string>;
  onSelect: (next: Set<string>) => void;
  onSort: (column: string) => void;
  onResize: (column: string, width: number | undefined) => void;
  /** A record as it is now, after an inline edit (or read when a cell opened). */
  onRecord: (record: ApiRecord) => void;
  caption: string;
}

export function RecordsTable(props: TableProps) {
  const { slug, description, rows, columns, view, references, selectable, selected, onSelect } = props;
  const [editing, setEditing] = useState<{ id: string; field: string }>();
  const [draft, setDraft] = useState<{ column: string; width: number }>();
  const editable = new Map(
    description.permissions.write && description.methods.includes('PATCH')
      ? formFields(description)
          .filter((f) => INLINE_KINDS.has(f.kind))
          .map((f) => [f.name, f] as const)
      : [],
  );
  const refs = new Map(references.map((r) => [r.column, r]));
  const widthOf = (c: string) => (draft?.column === c ? draft.width : view.widths[c]);
  // A resized column: its header that wide, its cells' content within it (less the cell's padding).
  const sized = (c: string) => {
    const w = widthOf(c);
    return w ? { width: `${w}px`, maxWidth: `${w}px`, minWidth: `${w}px` } : undefined;
  };
  const fitted = (c: string) => {
    const w = widthOf(c);
    return w ? { maxWidth: `calc(${w}px - 1rem)` } : undefined;
  };

  return (
    <table class="striped records">
      <caption class="visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          {selectable && (
            <th scope="col" class="check">
              <input
                type="checkbox"
                aria-label="Select all on this page"
                disabled={props.busy}
                checked={rows.length > 0 && rows.every((r) => selected.has(r.record.id))}
                onChange={(e) => onSelect(e.currentTarget.checked ? new Set(rows.map((r) => r.record.id)) : new Set())}
              />
            </th>
          )}
          {columns.map((c) => (
            <th key={c} scope="col" style={sized(c)} aria-sort={view.sort === c ? (view.order === 'asc' ? 'ascending' : 'descending') : undefined}>
              <button type="button" class="sort" onClick={() => props.onSort(c)}>
                {c}
                <span aria-hidden="true">{view.sort === c ? (view.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
              </button>
              <ResizeHandle column={c} width={widthOf(c)} onDraft={(width) => setDraft(width === undefined ? undefined : { column: c, width })} onCommit={(width) => (setDraft(undefined), props.onResize(c, width))} />
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map(({ record: r, mark }) => (
          <tr key={r.id} class={[selected.has(r.id) ? 'selected' : '', mark ? `live-${mark}` : ''].join(' ').trim() || undefined}>
            {selectable && (
              <td class="check">
                <input
                  type="checkbox"
                  aria-label={`Select ${r.id}`}
                  disabled={props.busy}
                  checked={selected.has(r.id)}
                  onChange={(e) => {
                    const next = new Set(selected);
                    if (e.currentTarget.checked) next.add(r.id);
                    else next.delete(r.id);
                    onSelect(next);
                  }}
                />
              </td>
            )}
            {columns.map((c) => {
              const field = editable.get(c);
              const open = editing?.id === r.id && editing.field === c;
              return (
                <td key={c} class={field ? 'editable' : undefined} onDblClick={field && mark !== 'deleted' && !open ? () => setEditing({ id: r.id, field: c }) : undefined}>
                  {open && field ? (
                    <CellEditor slug={slug} record={r} field={field} onRecord={props.onRecord} onClose={() => setEditing(undefined)} />
                  ) : c === 'id' ? (
                    <>
                      <a href={href(`${slug}/${encodeURIComponent(r.id)}`)} class="id" style={fitted(c)} title={r.id}>
                        {r.id}
                      </a>
                      {mark && <span class={`live-badge ${mark}`}>{mark}</span>}
                    </>
                  ) : (
                    <>
                      {refs.has(c) ? (
                        <span class="cell" style={fitted(c)}>
                          <RefValue reference={refs.get(c)!} value={r[c]} />
                        </span>
                      ) : description.schema[c]?.type === 'datetime' && typeof r[c] === 'string' ? (
                        <span class="cell" style={fitted(c)} title={r[c] as string}>
                          {shortTime(r[c] as string)}
                        </span>
                      ) : (
                        <span class="cell" style={fitted(c)} title={typeof r[c] === 'string' && (r[c] as string).length > 30 ? (r[c] as string) : undefined}>
                          {text(r[c])}
                        </span>
                      )}
                      {field && mark !== 'deleted' && (
                        // The pencil is drawn by CSS: the cell's text (what is copied, read or tested) is the value alone.
                        <button type="button" class="cell-edit" aria-label={`Edit ${c} of ${r.id}`} title={`Edit ${c}`} onClick={() => setEditing({ id: r.id, field: c })} />
                      )}
                    </>
                  )}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** An id or a list of ids, by their records' labels, each linked to its record (users have no page: their name). */
function RefValue({ reference, value }: { reference: Reference; value: unknown }) {
  // Drawn again when labels were learnt (a batched look-up answered).
  void labelsLearnt.value;
  const ids = (Array.isArray(value) ? value : typeof value === 'string' && value ? [value] : []).filter((v): v is string => typeof v === 'string');
  const linked = (entities.value ?? []).includes(reference.entity);
  return (
    <>
      {ids.map((id, i) => {
        const label = book.label(reference.entity, id) ?? id;
        return (
          <span key={id}>
            {i > 0 ? ', ' : ''}
            {linked ? (
              <a href={href(`${reference.entity}/${encodeURIComponent(id)}`)} title={id} class="ref">
                {label}
              </a>
            ) : (
              <span title={id} class="ref">
                {label}
              </span>
            )}
          </span>
        );
      })}
    </>
  );
}

/** A header's right edge: drag it, or focus it and use ←/→ (Home: back to the natural width). */
function ResizeHandle({ column, width, onDraft, onCommit }: { column: string; width?: number; onDraft: (w: number | undefined) => void; onCommit: (w: number | undefined) => void }) {
  const start = useRef<{ x: number; width: number; last: number } | undefined>(undefined);
  const clamp = (w: number) => Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, Math.round(w)));
  const current = (el: HTMLElement) => width ?? Math.round(el.parentElement!.getBoundingClientRect().width);
  return (
    <span
      class="resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize ${column}`}
      aria-valuemin={MIN_WIDTH}
      aria-valuemax={MAX_WIDTH}
      aria-valuenow={width ?? MIN_WIDTH}
      tabIndex={0}
      onPointerDown={(e) => {
        const el = e.currentTarget as HTMLElement;
        el.setPointerCapture(e.pointerId);
        start.current = { x: e.clientX, width: current(el), last: current(el) };
        e.preventDefault();
      }}
      onPointerMove={(e) => {
        if (!start.current) return;
        start.current.last = clamp(start.current.width + e.clientX - start.current.x);
        onDraft(start.current.last);
      }}
      onPointerUp={() => {
        if (start.current) onCommit(start.current.last);
        start.current = undefined;
      }}
      onDblClick={() => onCommit(undefined)}
      onKeyDown={(e) => {
        const el = e.currentTarget as HTMLElement;
        const step = e.shiftKey ? 64 : 16;
        if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          e.preventDefault();
          onCommit(clamp(current(el) + (e.key === 'ArrowRight' ? step : -step)));
        } else if (e.key === 'Home') {
          e.preventDefault();
          onCommit(undefined);
        }
      }}
    />
  );
}

/**
 * A cell in edit: the record is read when it opens (its latest value and ETag), the change is sent
 * with If-Match. A 412 (someone saved in between) offers to reload and re-apply, or to discard; a
 * 422 is shown under the input as its description.
 */
function CellEditor({ slug, record, field, onRecord, onClose }: { slug: string; record: ApiRecord; field: FormField; onRecord: (r: ApiRecord) => void; onClose: () => void }) {
  const [etag, setEtag] = useState<string>();
  const [original, setOriginal] = useState<FormValue>();
  const [value, setValue] = useState<FormValue>(initialValues([field], record)[field.name]);
  const [error, setError] = useState<string>();
  const [failure, setFailure] = useState<ApiFailure>();
  const [conflict, setConflict] = useState(false);
  const [busy, setBusy] = useState(true);
  const input = useRef<HTMLInputElement & HTMLSelectElement>(null);
  const id = `cell-${record.id}-${field.name}`;

  async function load(keep?: FormValue) {
    setBusy(true);
    setFailure(undefined);
    try {
      const { body, response } = await unwrap<{ data: ApiRecord }>(client.GET(recordPath(slug), { params: { path: { id: record.id } } }));
      const latest = initialValues([field], body.data)[field.name];
      setEtag(response.headers.get('ETag') ?? undefined);
      setOriginal(latest);
      setValue(keep ?? latest);
      onRecord(body.data);
    } catch (e) {
      setFailure(e as ApiFailure);
    } finally {
      setBusy(false);
      setTimeout(() => input.current?.focus(), 0);
    }
  }

  useEffect(() => {
    load();
  }, []);

  async function save(e: Event) {
    e.preventDefault();
    if (busy || original === undefined) return;
    const body = toBody([field], { [field.name]: value }, { [field.name]: original });
    if (!Object.keys(body).length) return onClose();
    setBusy(true);
    setError(undefined);
    setFailure(undefined);
    setConflict(false);
    try {
      const { body: answer } = await unwrap<{ data: ApiRecord }>(
        client.PATCH(recordPath(slug), { params: { path: { id: record.id }, header: (etag ? { 'If-Match': etag } : {}) as never }, body: body as never }),
      );
      onRecord(answer.data);
      flash(`Saved ${field.name} of ${record.id}.`);
      onClose();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) setConflict(true);
      else if (err instanceof ApiFailure && err.status === 422) setError(err.details[field.name] ?? Object.values(err.details)[0] ?? err.message);
      else setFailure(err as ApiFailure);
    } finally {
      setBusy(false);
    }
  }

  const a11y = {
    id,
    ref: input,
    'aria-label': `${field.name} of ${record.id}`,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
    disabled: busy && original === undefined,
  };
  let control;
  if (field.kind === 'select') {
    control = (
      <select {...a11y} value={String(value)} onChange={(e) => setValue(e.currentTarget.value)}>
        {!field.required || value === '' ? <option value="">—</option> : null}
        {field.options!.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'checkbox') {
    control = <input type="checkbox" role="switch" {...a11y} checked={value === true} onChange={(e) => setValue(e.currentTarget.checked)} />;
  } else {
    const type = field.kind === 'number' ? 'number' : field.kind === 'date' ? 'date' : field.kind === 'datetime' ? 'datetime-local' : 'text';
    control = <input type={type as 'text'} step={field.kind === 'number' ? 'any' : undefined} maxLength={field.maxLength} {...a11y} value={String(value)} onInput={(e) => setValue(e.currentTarget.value)} />;
  }

  return (
    <form
      class="cell-editor"
      noValidate
      onSubmit={save}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <div class="cell-row">
        {control}
        <button type="submit" class="small" aria-busy={busy && original !== undefined ? 'true' : undefined} disabled={busy}>
          Save
        </button>
        <button type="button" class="secondary outline small" onClick={onClose}>
          Cancel
        </button>
      </div>
      {error && (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      )}
      {failure && (
        <small role="alert" class="field-error">
          {failure.message}
        </small>
      )}
      {conflict && (
        <div role="alert" class="conflict">
          <p>
            <strong>Changed by someone else</strong> since you opened it (412 Precondition Failed): your change was not saved.
          </p>
          <button type="button" class="small" onClick={() => (setConflict(false), load(value))}>
            Reload and re-apply my change
          </button>{' '}
          <button type="button" class="secondary outline small" onClick={() => (setConflict(false), load())}>
            Discard my change
          </button>
        </div>
      )}
    </form>
  );
}
