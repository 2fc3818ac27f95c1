/**
 * The session's rate-limit budget as the dashboard spends it: how long a countdown reads, what is
 * kept back for the user's other pages, and how an export or import of N requests fits the
 * window (how long it takes, whether it waits for a reset). Pure, so unit tests check it.
 */

export interface Window {
  limit: number;
  remaining: number;
  /** When the window resets, in ms on this browser's clock. */
  resetAt: number;
}

/** `mm:ss`, or `h:mm:ss` from an hour. */
export function countdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/**
 * A count with its thousands grouped (`4,987`) and a time of day (`14:05`), without Intl: the
 * header draws the budget on the first answer, and a page's first use of Intl costs tens of ms.
 */
export function count(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function clock(ms: number, seconds = false): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}${seconds ? `:${two(d.getSeconds())}` : ''}`;
}

/** A duration as people say it: "under a minute"-level wording, rounded. */
export function duration(ms: number): string {
  const s = Math.max(1, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** Requests a long transfer leaves in the window for the user's other pages: a tenth of it, at most 20. */
export function reserveOf(limit: number): number {
  return Math.min(20, Math.floor(limit / 10));
}

/** `1h`, `10s`, `15m`, `1d` (OPTIONS rateLimit.window) in ms; an hour when unknown. */
export function windowMs(text: string | undefined): number {
  const match = /^(\d+)([smhd])$/.exec(text ?? '');
  if (!match) return 3_600_000;
  return Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
}

export interface Plan {
  requests: number;
  /** When the window (as it will be when the transfer starts) resets. */
  resetAt?: number;
  /** Requests the window has for this transfer now (what is left less the reserve). */
  now: number;
  /** Window resets the transfer waits for (0: it runs at once, start to end). */
  waits: number;
  /** About how long it takes, in ms. */
  ms: number;
}

/**
 * How `requests` requests fit the session's window: all at once when the window has them (less the
 * reserve), else what it has now, then a pause until each reset. `window` is undefined before the
 * first answer told the budget: the estimate is then the requests' time alone.
 */
export function plan(requests: number, window: Window | undefined, callMs: number, windowLengthMs: number, nowMs = Date.now()): Plan {
  const work = requests * Math.max(1, callMs);
  if (!window) return { requests, now: requests, waits: 0, ms: work };
  // A window that has reset since the last answer is whole again, until its next reset.
  const current =
    window.resetAt > nowMs ? window : { limit: window.limit, remaining: window.limit, resetAt: window.resetAt + Math.ceil((nowMs - window.resetAt + 1) / windowLengthMs) * windowLengthMs };
  const reserve = reserveOf(current.limit);
  const now = Math.max(0, current.remaining - reserve);
  if (requests <= now) return { requests, resetAt: current.resetAt, now: requests, waits: 0, ms: work };
  const perWindow = Math.max(1, current.limit - reserve);
  const waits = Math.ceil((requests - now) / perWindow);
  return { requests, resetAt: current.resetAt, now, waits, ms: current.resetAt - nowMs + (waits - 1) * windowLengthMs + work };
}

/** Whether a transfer should pause before its next request: the window is down to the reserve and has not reset yet. */
export function mustPause(window: Window | undefined, nowMs = Date.now()): boolean {
  return Boolean(window && window.remaining <= reserveOf(window.limit) && window.resetAt > nowMs);
}
