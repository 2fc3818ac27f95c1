/**
 * One open event stream: a Readable of text/event-stream that
 * - starts with the `retry:` hint and `data: {"type":"connected"}` (and `event: reset` when the
 *   client's Last-Event-ID is older than the retention);
 * - queries its tenant's event partition after the last position every `pollMs` and sends the
 *   events the caller may see (row-level security of LIST), each with its position as `id:`;
 * - sends `: ping` every `heartbeatMs` (proxies and API Gateway's idle timeout);
 * - renews its open-stream lease, and ends by itself after `durationMs` (before the platform's
 *   limits) so that the client reconnects with its last id and loses nothing.
 * Destroying it (the client went away) stops every timer and releases the lease: no poll runs
 * after that.
 *
 * Events are read only once they are SETTLE_MS old: an event's position is stamped just before
 * its transaction is sent, so a transaction committing a moment after a later-stamped one is
 * still read in position order and never skipped.
 */
import { Readable } from 'node:stream';
import { logger } from '../logger.js';
import type { LoadedEntity } from '../registry/types.js';
import { eventPartition, positionAt, positionTime, readEventsAfter, type EventPage, type StreamEvent } from './events.js';
import { LEASE_RENEW_MS, releaseLease, renewLease, type StreamLease } from './leases.js';
import { changeMessage, connectedMessage, HEARTBEAT, resetMessage, retryHint } from './messages.js';

export const SETTLE_MS = 200;
/** Pages read in one poll before yielding to the next (a backlog drains over a few polls). */
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
  lease?: StreamLease;
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
  private readonly timers: NodeJS.Timeout[] = [];
  private pollTimer?: NodeJS.Timeout;
  private stopped = false;
  private readonly read_: (partition: string, after: string) => Promise<EventPage>;
  private readonly leases: NonNullable<EventStreamOptions['leases']>;

  constructor(private readonly options: EventStreamOptions) {
    super();
    this.position = options.start;
    this.partition = eventPartition(options.viewer.tenantId, options.entity);
    this.read_ = options.read ?? readEventsAfter;
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

  /**
   * One poll: reads after the position until the partition is drained or an unsettled event is
   * met. Polls start every `pollMs` (a slow query delays the next, never stacks them); when an
   * event was held back, the next poll runs as soon as it settles.
   */
  private async poll(): Promise<void> {
    const started = Date.now();
    let heldBack: StreamEvent | undefined;
    try {
      for (let page = 0; page < PAGES_PER_POLL && !this.stopped; page++) {
        const cutoff = positionAt(Date.now() - SETTLE_MS);
        const { events, more } = await this.read_(this.partition, this.position);
        for (const event of events) {
          if (this.stopped) return;
          if (event.position >= cutoff) {
            heldBack = event;
            break;
          }
          this.position = event.position;
          if (visibleTo(this.options.entity, this.options.viewer, event)) this.send(changeMessage(this.options.entity, event));
        }
        if (!more || heldBack) break;
      }
    } catch (error) {
      // A failed query is retried at the next poll, from the same position.
      logger.warn('event stream: query failed', { error: error as Error });
    }
    const now = Date.now();
    let delay = Math.max(0, started + this.options.pollMs - now);
    if (heldBack) delay = Math.min(delay, Math.max(0, positionTime(heldBack.position) + SETTLE_MS + 1 - now));
    this.schedulePoll(delay);
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
    if (!this.options.lease) return;
    try {
      await this.leases.release(this.options.lease);
    } catch (error) {
      logger.warn('event stream: lease release failed', { error: error as Error });
    }
  }
}
