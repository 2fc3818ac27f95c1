/** Small shared pieces: loading and error states, a confirmation dialog. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** A time for a table cell: the browser's local format, or a dash for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function Loading({ label }: { label: string }) {
  return (
    <p aria-busy="true" class="loading">
      {label}…
    </p>
  );
}

export function ErrorText({ message, code }: { message: string; code?: string }) {
  return (
    <p role="alert" class="error-box">
      {message}
      {code ? <small> ({code})</small> : null}
    </p>
  );
}

/** A modal dialog (the browser's own <dialog>: focus is kept inside, Escape closes it). */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    if (!dialog.open) dialog.showModal();
    const cancel = (e: Event) => {
      e.preventDefault();
      onClose();
    };
    dialog.addEventListener('cancel', cancel);
    return () => dialog.removeEventListener('cancel', cancel);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title">
      <article>
        <header>
          <h2 id="dialog-title">{title}</h2>
        </header>
        {children}
      </article>
    </dialog>
  );
}

export function Confirm({ title, text, action, onConfirm, onClose, busy }: { title: string; text: string; action: string; onConfirm: () => void; onClose: () => void; busy?: boolean }) {
  return (
    <Modal title={title} onClose={onClose}>
      <p>{text}</p>
      <footer>
        <button type="button" class="secondary" onClick={onClose}>
          Cancel
        </button>{' '}
        <button type="button" class="danger" aria-busy={busy ? 'true' : undefined} disabled={busy} onClick={onConfirm}>
          {action}
        </button>
      </footer>
    </Modal>
  );
}
