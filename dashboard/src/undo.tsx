/**
 * The toast after a bulk call (bulk update, bulk delete, import): what it did, with **Undo**,
 * which sends POST /api/v1/operations/{operationId}/undo for each of its operations (an import
 * sent in batches is one per batch) and says what was reverted and what was left as it is.
 * Like a notice it belongs to its page; unlike one it stays until used, dismissed or replaced,
 * so there is time to read it and act.
 */
import { signal } from '@preact/signals';
import { ApiFailure, client, unwrap } from './api.js';
import { sumUndo, undoText, type UndoResult } from './history.js';
import { flash, notice, pagePath } from './state.js';

interface Offer {
  text: string;
  operationIds: string[];
  path: string;
  /** After the undo: the page shows the records as they are now. */
  onUndone?: () => void;
  busy?: boolean;
  error?: string;
}

export const undoOffer = signal<Offer | undefined>(undefined);

/** A bulk call's toast; with no operation to undo (nothing written), a plain notice. */
export function offerUndo(text: string, operationIds: (string | undefined)[], onUndone?: () => void, path = pagePath()): void {
  const ids = operationIds.filter((id): id is string => Boolean(id));
  if (!ids.length) {
    undoOffer.value = undefined;
    flash(`${text}.`, 'success', path);
    return;
  }
  notice.value = undefined;
  undoOffer.value = { text, operationIds: ids, path, ...(onUndone ? { onUndone } : {}) };
}

async function undo(offer: Offer): Promise<void> {
  undoOffer.value = { ...offer, busy: true, error: undefined };
  const results: UndoResult[] = [];
  try {
    for (const operationId of offer.operationIds) {
      const { body } = await unwrap<{ data: UndoResult }>(client.POST('/api/v1/operations/{operationId}/undo', { params: { path: { operationId } } }));
      results.push(body.data);
    }
  } catch (e) {
    // Operations already undone answer {reverted: 0}: Undo again finishes the rest.
    const message = e instanceof ApiFailure ? `${e.message} (${e.code})` : String(e);
    undoOffer.value = { ...offer, busy: false, error: `The undo did not finish: ${message}` };
    return;
  }
  undoOffer.value = undefined;
  flash(undoText(sumUndo(results)), 'info', offer.path);
  offer.onUndone?.();
}

export function UndoToast({ path }: { path: string }) {
  const offer = undoOffer.value;
  if (!offer || offer.path !== path) return null;
  return (
    <div class="toast">
      <p role="status">
        {offer.text} —{' '}
      </p>
      <button type="button" class="small" aria-busy={offer.busy ? 'true' : undefined} disabled={offer.busy} onClick={() => undo(offer)}>
        Undo
      </button>
      <button type="button" class="secondary outline small" aria-label="Dismiss" title="Dismiss" onClick={() => (undoOffer.value = undefined)}>
        ✕
      </button>
      {offer.error && (
        <p role="alert" class="field-error">
          {offer.error}
        </p>
      )}
    </div>
  );
}
