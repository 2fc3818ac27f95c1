/**
 * The explorer's view controls: saved views (per user, kept in this browser; each is a URL, so it
 * is shared by sharing its link) and the choice and order of the columns.
 */
import { useState } from 'preact/hooks';
import { moveColumn, firstPage, viewToParams, visibleColumns, type View } from '../query.js';
import { navigate } from '../router.js';
import { flash, me } from '../state.js';
import { Modal } from '../ui.js';
import { deleteView, saveView, savedViews, type SavedView } from '../views.js';

export function SavedViews({ slug, view, numeric }: { slug: string; view: View; numeric: ReadonlySet<string> }) {
  const userId = me.value!.id;
  const [views, setViews] = useState(() => savedViews(userId));
  const [naming, setNaming] = useState(false);
  const [copied, setCopied] = useState(false);
  const query = viewToParams(firstPage(view), numeric).toString();
  const mine = views.filter((v) => v.entity === slug);
  const current = mine.find((v) => v.query === query);

  async function copyLink() {
    try {
      await navigator.clipboard.writeText(location.href);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      flash(`The link of this view: ${location.href}`, 'info');
    }
  }

  return (
    <div class="saved-views">
      <label class="inline">
        <span>View</span>
        <select
          aria-label="Saved views"
          value={current ? current.name : ''}
          onChange={(e) => {
            const chosen = mine.find((v) => v.name === e.currentTarget.value);
            navigate(slug, new URLSearchParams(chosen ? chosen.query : ''));
          }}
        >
          <option value="">{current || !query ? 'All records' : 'Unsaved view'}</option>
          {mine.map((v) => (
            <option key={v.name} value={v.name}>
              {v.name}
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="secondary outline small" onClick={() => setNaming(true)}>
        Save view
      </button>
      {current && (
        <button type="button" class="secondary outline small" aria-label={`Delete the view ${current.name}`} onClick={() => setViews(deleteView(userId, current))}>
          Delete view
        </button>
      )}
      <button type="button" class="secondary outline small" onClick={copyLink}>
        {copied ? 'Link copied' : 'Copy link'}
      </button>
      {naming && (
        <SaveView
          suggested={current?.name ?? ''}
          onClose={() => setNaming(false)}
          onSave={(name) => {
            const saved: SavedView = { name, entity: slug, query };
            setViews(saveView(userId, saved));
            setNaming(false);
            flash(`Saved the view “${name}”: it is in the View list, and its link opens it.`);
          }}
        />
      )}
    </div>
  );
}

function SaveView({ suggested, onSave, onClose }: { suggested: string; onSave: (name: string) => void; onClose: () => void }) {
  const [name, setName] = useState(suggested);
  const [error, setError] = useState<string>();
  return (
    <Modal title="Save this view" onClose={onClose}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (!name.trim()) return setError('A view needs a name.');
          onSave(name.trim().slice(0, 80));
        }}
      >
        <label for="view-name">View name</label>
        <input id="view-name" value={name} maxLength={80} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? 'view-name-error' : 'view-name-hint'} onInput={(e) => setName(e.currentTarget.value)} />
        {error ? (
          <small id="view-name-error" class="field-error">
            {error}
          </small>
        ) : (
          <small id="view-name-hint">Its filters, search, sort, columns and widths; kept for you in this browser. A view of the same name is replaced.</small>
        )}
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>{' '}
          <button type="submit">Save view</button>
        </footer>
      </form>
    </Modal>
  );
}

/** Which columns show, and in what order; every change is the view's URL at once (no request). */
export function ColumnsDialog({ all, view, onChange, onClose }: { all: string[]; view: View; onChange: (v: View) => void; onClose: () => void }) {
  const shown = visibleColumns(view, all);
  const order = [...shown, ...all.filter((c) => !shown.includes(c))];
  const set = (columns: string[]) => onChange({ ...view, columns: columns.join() === all.join() ? [] : columns });
  return (
    <Modal title="Columns" onClose={onClose}>
      <p class="muted">Shown columns in their order; hidden ones below. Widths: drag a header's edge (or focus it and use ← →).</p>
      <ul class="column-list" aria-label="Columns">
        {order.map((c) => {
          const visible = shown.includes(c);
          return (
            <li key={c}>
              <label>
                <input
                  type="checkbox"
                  checked={visible}
                  disabled={visible && shown.length === 1}
                  onChange={(e) => set(e.currentTarget.checked ? [...shown, c] : shown.filter((x) => x !== c))}
                />
                {c}
              </label>
              {visible && (
                <span class="move">
                  <button type="button" class="secondary outline small" aria-label={`Move ${c} left`} disabled={shown[0] === c} onClick={() => set(moveColumn(shown, c, -1))}>
                    ↑
                  </button>
                  <button type="button" class="secondary outline small" aria-label={`Move ${c} right`} disabled={shown.at(-1) === c} onClick={() => set(moveColumn(shown, c, 1))}>
                    ↓
                  </button>
                </span>
              )}
            </li>
          );
        })}
      </ul>
      <footer>
        <button type="button" class="secondary" onClick={() => onChange({ ...view, columns: [], widths: {} })}>
          Reset columns
        </button>{' '}
        <button type="button" onClick={onClose}>
          Done
        </button>
      </footer>
    </Modal>
  );
}
