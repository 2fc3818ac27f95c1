/** Small shared pieces: loading and error states, the rate-limit banner and budget, a confirmation dialog. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, budget, endLimit, limitedUntil } from './api.js';
import { clock, count, countdown } from './budget.js';
import { retryPage } from './state.js';

/** A time for a table cell: the browser's local format, or a dash for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function Loading({ label }: { label: string }) {
  return (
    <p aria-busy="true" class="loading">
      {label}…
    </p>
  );
}

/** The time on this browser's clock, updated every second while `active`. */
function useClock(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

/** An answer worth asking again: the network failed, the rate limit, the server or a gateway. */
export function retryable(error: unknown): boolean {
  return error instanceof ApiFailure && (error.status === 0 || error.status === 429 || error.status >= 500);
}

/**
 * An error in words, with a Retry (the page's requests again) when asking again may help. Never a
 * spinner left turning: every failed request of a page ends here.
 */
export function ErrorText({ message, code, error, onRetry }: { message?: string; code?: string; error?: Error; onRetry?: () => void }) {
  const failure = error instanceof ApiFailure ? error : undefined;
  const text = message ?? (failure?.status === 429 ? "Not loaded yet: the session's rate-limit window is used up." : (error?.message ?? 'Something went wrong'));
  const until = limitedUntil.value;
  // Drawn again each second while the window is closed: Retry comes back when it opens.
  const now = useClock(failure?.status === 429 && until !== undefined);
  const waiting = until !== undefined && until > now;
  const hint =
    failure?.status === 429
      ? ' Retry once the window resets: the notice at the top counts down to it.'
      : failure?.status === 0
        ? ' Check the connection, then retry.'
        : '';
  return (
    <div role="alert" class="error-box">
      <p>
        {text}
        {(code ?? failure?.code) ? <small> ({code ?? failure?.code})</small> : null}
        {hint}
      </p>
      {(onRetry || retryable(error)) && (
        <button type="button" class="secondary outline small" disabled={failure?.status === 429 && waiting} onClick={onRetry ?? retryPage}>
          Retry
        </button>
      )}
    </div>
  );
}

/**
 * The rate limit reached: a polite notice on every page with a countdown to the window's reset,
 * then a Retry. A later answer that gets through takes it away. `onOpen` runs once the window has
 * reset (the session check asks again by itself; a page with a form waits for the user).
 */
export function RateLimitBanner({ onOpen }: { onOpen?: () => void }) {
  const until = limitedUntil.value;
  const now = useClock(until !== undefined);
  const open = until !== undefined && now >= until;
  useEffect(() => {
    if (open) onOpen?.();
  }, [open]);
  if (until === undefined) return null;
  const at = clock(until, true);
  return (
    <section class="limit-banner" aria-labelledby="limit-title">
      <h2 id="limit-title">{open ? 'You can carry on' : 'A short pause'}</h2>
      {open ? (
        <p role="status">The rate-limit window has reset: requests go through again.</p>
      ) : (
        <p role="status">
          Your session has used the {budget.value ? count(budget.value.limit) : ''} requests its rate-limit window allows, so the API asks the dashboard to wait until {at}. Nothing
          you entered is lost.
        </p>
      )}
      {!open && (
        <p class="countdown">
          Requests go through again in <span role="timer" aria-label="Time until the window resets">{countdown(until - now)}</span>
        </p>
      )}
      <div class="limit-actions">
        <button type="button" class="small" disabled={!open} onClick={() => (endLimit(), retryPage())}>
          Retry now
        </button>
        {open && (
          <button type="button" class="secondary outline small" onClick={endLimit}>
            Dismiss
          </button>
        )}
      </div>
    </section>
  );
}

/** What the session's window has left, at every width: the number, and the limit and reset on wider screens and in the title. */
export function BudgetMeter() {
  const b = budget.value;
  if (!b) return null;
  const label = `Requests left in this rate-limit window: ${count(b.remaining)} of ${count(b.limit)}, until ${clock(b.resetAt)}`;
  return (
    <span class={`quota${b.remaining <= b.limit / 10 ? ' low' : ''}`} title={label} aria-label={label} role="img">
      <span aria-hidden="true">
        {count(b.remaining)}
        <span class="quota-of"> / {count(b.limit)}</span> left
      </span>
    </span>
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
