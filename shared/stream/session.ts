/**
 * One open event stream: a Readable of text/event-stream that
 * - starts with the `retry:` hint and `data: {"type":"connected"}` (and `event: reset` when the
 *   client's Last-Event-ID is older than the retention);
 * - queries its tenant's event partition (every write shard of it, merged: events.ts) every `pollMs` and sends the events the caller may see
 *   (row-level security of LIST);
 * - sends `: ping` every `heartbeatMs` (proxies and API Gateway's idle timeout);
 * - renews its open-stream lease, and ends by itself after `durationMs` (before the platform's
 *   limits) so that the client reconnects with its last id and loses nothing.
 * Destroying it (the client went away) stops every timer and releases the lease: no poll runs
 * after that.
 *
 * Why nothing is skipped. An event's position is the time its writer stamped on it just before
 * sending its transaction (shared/data/transact.ts sendTransaction), so events can become visible
 * out of position order: a transaction stamped first may commit after one stamped later. Two
 * rules cover that:
 * - In order, with a hold-back: the stream's position (the SSE `id:` of each message, what a
 *   reconnect resumes from) moves past an event only once the event is `settleMs` old. An event
 *   whose commit trails its stamp by less than that is therefore never behind the position when
 *   it appears: positions are exact resume points.
 * - A look-back for the rest: every LOOKBACK_EVERY_MS the stream re-reads the `lookbackMs` behind
 *   its position and sends, at once and without an `id:` line (the client's resume position
 *   stays where it was), any event it has not sent yet. `lookbackMs` is longer than any
 *   transaction can take between its stamp and its commit (docs/delivery-guarantees.md), so an
 *   event that commits late still reaches the live stream, exactly once: the events sent (or
 *   found already there when the stream started) within the window are remembered by position.
 * Where a stream starts:
 * - opened without Last-Event-ID, the events already in the window when it starts are taken as
 *   there before it (not sent);
 * - resumed with Last-Event-ID, the previous connection's hand-off (handoff.ts: the positions it
 *   sent in its window, saved under its last id when it ended) says which events of the window
 *   the client has; the others committed late while it was away and are sent at once, without an
 *   id. Without a hand-off the window is taken as sent.
 * Only events at or before the start are taken as there: a first pass cut short by a failed
 * query never makes a later late commit look old.
 */
import { Readable } from 'node:stream';
import { loadLayouts } from '../migrations/index.js';
import { logger } from '../logger.js';
import type { LoadedEntity } from '../registry/index.js';
import { eventPartition, positionAt, positionTime, readEventsAfter, type EventPage, type StreamEvent } from './events.js';
import type { Handoff } from './handoff.js';
import { LEASE_RENEW_MS, releaseLease, renewLease, type StreamLease } from './leases.js';
import { changeMessage, connectedMessage, HEARTBEAT, resetMessage, retryHint } from './messages.js';

/** How old an event must be before the stream's position moves past it (STREAM_SETTLE_MS). */
export const SETTLE_MS = 500;
/** How far behind its position the stream looks for late commits (STREAM_LOOKBACK_MS). */
export const LOOKBACK_MS = 15_000;
/** How often the look-back runs (a late event reaches the client within about this long). */
export const LOOKBACK_EVERY_MS = 1_000;
/** Pages read after the position in one poll before yielding to the next (a backlog drains over a few polls). */
const PAGES_PER_POLL = 10;
/** A client this far behind is cut off; it reconnects with its last id and resumes. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface StreamViewer {
  tenantId: string;
  userId: string;
  admin: boolean;
}

export interface EventStreamOptions {
  entity: LoadedEntity;
  viewer: StreamViewer;
  /** Send events after this position. */
  start: string;
  /** The client's id was older than the retention: send `event: reset` first. */
  reset?: boolean;
  pollMs: number;
  heartbeatMs: number;
  retryMs: number;
  durationMs: number;
  /** Hold-back before the position passes an event (default SETTLE_MS). */
  settleMs?: number;
  /** Window re-read behind the position (default LOOKBACK_MS). */
  lookbackMs?: number;
  /** How often the window is re-read (default LOOKBACK_EVERY_MS). */
  lookbackEveryMs?: number;
  lease?: StreamLease;
  /** `start` is the client's Last-Event-ID: look for the previous connection's hand-off. */
  resumed?: boolean;
  /** Loading and saving hand-offs (handoff.ts); without it, none are kept. */
  handoff?: { load(lastId: string): Promise<Handoff | undefined>; save(lastId: string, handoff: Handoff): Promise<void> };
  /** The events query (tests pass their own). */
  read?: (partition: string, after: string) => Promise<EventPage>;
  /** The lease calls (tests pass their own). */
  leases?: { renew(lease: StreamLease): Promise<boolean>; release(lease: StreamLease): Promise<void> };
}

/** Row-level security of LIST: the tenant's records to everyone there when shared (or public), else the owner's and an admin's. */
export function visibleTo(entity: Pick<LoadedEntity, 'access'>, viewer: StreamViewer, event: StreamEvent): boolean {
  if (event.tenantId !== viewer.tenantId) return false;
  if (entity.access.public || entity.access.shared || viewer.admin) return true;
  return event.ownerId === viewer.userId;
}

export class EventStream extends Readable {
  private position: string;
  private readonly partition: string;
  /** Positions within the look-back window already sent (or there when the stream started). */
  private readonly seen = new Set<string>();
  private seeded = false;
  /** The previous connection's hand-off (resumed streams), once loaded. */
  private previous?: Handoff;
  private previousLoaded = false;
  /** Every event after this position was read by this stream and is in `seen` (a hand-off's `from`). */
  private coveredFrom: string;
  /** The id of the last message sent with an id: what the client resumes from. */
  private lastSentId: string;
  private lastLookback = 0;
  private readonly settleMs: number;
  private readonly lookbackMs: number;
  private readonly timers: NodeJS.Timeout[] = [];
  private pollTimer?: NodeJS.Timeout;
  private stopped = false;
  private readonly read_: (partition: string, after: string) => Promise<EventPage>;
  private readonly leases: NonNullable<EventStreamOptions['leases']>;

  constructor(private readonly options: EventStreamOptions) {
    super();
    this.position = options.start;
    this.lastSentId = options.start;
    this.coveredFrom = options.start;
    this.settleMs = options.settleMs ?? SETTLE_MS;
    this.lookbackMs = options.lookbackMs ?? LOOKBACK_MS;
    this.partition = eventPartition(options.viewer.tenantId, options.entity);
    // The event shards of the layout loaded before each read (a stream outlives many refreshes;
    // a change of writeShards merges both counts' events).
    this.read_ =
      options.read ??
      (async (partition, after) => readEventsAfter(partition, after, (await loadLayouts()).of(options.entity).shards.events));
    this.leases = options.leases ?? { renew: renewLease, release: releaseLease };
    this.push(retryHint(options.retryMs) + connectedMessage(this.position));
    if (options.reset) this.push(resetMessage(this.position));
    this.timers.push(setInterval(() => this.send(HEARTBEAT), options.heartbeatMs));
    this.timers.push(setTimeout(() => this.finish(), options.durationMs));
    if (options.lease) this.timers.push(setInterval(() => void this.renew(), LEASE_RENEW_MS));
    this.schedulePoll(0);
  }

  override _read(): void {
    // Push-driven: messages are pushed as they arrive; a slow reader is cut off (send).
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void this.close();
    callback(error);
  }

  private send(text: string): void {
    if (this.stopped) return;
    if (this.readableLength > MAX_BUFFERED_BYTES) return this.finish();
    this.push(text);
  }

  private schedulePoll(delay: number): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => void this.poll(), delay);
  }

  /** The start of the look-back window behind the position. */
  private windowStart(): string {
    return positionAt(positionTime(this.position) - this.lookbackMs);
  }

  /**
   * One poll. With the look-back due (and always first), reads from the window's start, else
   * from the position; in one pass over the pages:
   * - an event at or behind the position that was not sent yet is a late commit: sent now,
   *   without an id (or, on the first read, taken as already there);
   * - an event after the position is sent in order, with its position as id, once `settleMs`
   *   old; the first younger one stops the pass (the next poll runs when it settles).
   * Polls start every `pollMs` (a slow query delays the next, never stacks them).
   */
  private async poll(): Promise<void> {
    const started = Date.now();
    let heldBack: StreamEvent | undefined;
    try {
      if (this.options.resumed && this.options.handoff && !this.previousLoaded) {
        this.previous = await this.options.handoff.load(this.options.start).catch((error: unknown) => {
          logger.warn('event stream: hand-off not read; the window is taken as sent', { error: error as Error });
          return undefined;
        });
        this.previousLoaded = true;
      }
      const lookback = !this.seeded || started - this.lastLookback >= (this.options.lookbackEveryMs ?? LOOKBACK_EVERY_MS);
      const from = lookback ? this.windowStart() : this.position;
      let after = from;
      let pagesAhead = 0;
      for (;;) {
        if (this.stopped) return;
        const cutoff = positionAt(Date.now() - this.settleMs);
        const { events, more } = await this.read_(this.partition, after);
        let aheadOnPage = false;
        for (const event of events) {
          if (this.stopped) return;
          after = event.position;
          if (event.position <= this.position) {
            if (this.seen.has(event.position)) continue;
            this.seen.add(event.position);
            if (!this.takenAsThere(event.position) && visibleTo(this.options.entity, this.options.viewer, event)) this.send(changeMessage(this.options.entity, event, { late: true }));
            continue;
          }
          aheadOnPage = true;
          if (event.position >= cutoff) {
            heldBack = event;
            break;
          }
          this.position = event.position;
          this.seen.add(event.position);
          if (visibleTo(this.options.entity, this.options.viewer, event)) {
            this.send(changeMessage(this.options.entity, event));
            this.lastSentId = event.position;
          }
        }
        if (aheadOnPage) pagesAhead++;
        if (!more || heldBack || pagesAhead >= PAGES_PER_POLL) break;
      }
      if (lookback) {
        this.seeded = true;
        this.lastLookback = started;
        const floor = this.windowStart();
        for (const position of this.seen) if (position <= floor) this.seen.delete(position);
        // Every event after the floor was read by this stream (the first pass read from its window's start).
        this.coveredFrom = floor;
      }
    } catch (error) {
      // A failed query is retried at the next poll, from the same position.
      logger.warn('event stream: query failed', { error: error as Error });
    }
    const now = Date.now();
    let delay = Math.max(0, started + this.options.pollMs - now);
    if (heldBack) delay = Math.min(delay, Math.max(0, positionTime(heldBack.position) + this.settleMs + 1 - now));
    this.schedulePoll(delay);
  }

  /**
   * An event found behind the position that this stream has not handled: on the first pass, one
   * at or before the start was there before the stream (a resumed stream asks the hand-off);
   * anything else committed late and is sent.
   */
  private takenAsThere(position: string): boolean {
    if (this.seeded || position > this.options.start) return false;
    const previous = this.previous;
    if (!previous || position <= previous.from) return true;
    return previous.sent.has(position);
  }

  private async renew(): Promise<void> {
    if (this.stopped || !this.options.lease) return;
    try {
      if (!(await this.leases.renew(this.options.lease))) this.finish();
    } catch (error) {
      logger.warn('event stream: lease renewal failed', { error: error as Error });
    }
  }

  /**
   * Ends the response cleanly (the client reconnects with its last id). The lease is released
   * before the end, so that it is gone before Lambda freezes the container.
   */
  finish(): void {
    if (this.stopped) return;
    void this.close().finally(() => this.push(null));
  }

  private async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.pollTimer);
    for (const timer of this.timers) clearTimeout(timer);
    // What this stream sent in its window, for the connection that resumes from its last id.
    if (this.options.handoff && this.seeded) {
      try {
        await this.options.handoff.save(this.lastSentId, { from: this.coveredFrom, sent: this.seen });
      } catch (error) {
        logger.warn('event stream: hand-off not saved', { error: error as Error });
      }
    }
    if (!this.options.lease) return;
    try {
      await this.leases.release(this.options.lease);
    } catch (error) {
      logger.warn('event stream: lease release failed', { error: error as Error });
    }
  }
}
