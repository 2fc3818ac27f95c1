import { describe, expect, it } from 'vitest';
import { positionAt, type EventPage, type StreamEvent } from '../../../shared/stream/events.js';
import type { Handoff } from '../../../shared/stream/handoff.js';
import type { StreamLease } from '../../../shared/stream/leases.js';
import { EventStream, SETTLE_MS, visibleTo, type EventStreamOptions } from '../../../shared/stream/session.js';

const tasks = { slug: 'tasks', tableName: 'tasks', fields: { title: {} }, access: { public: false, shared: false } } as never;
const shared = { access: { public: false, shared: true } } as never;
const alice = { tenantId: 't1', userId: 'alice', admin: false };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function change(position: string, ownerId = 'alice', tenantId = 't1'): StreamEvent {
  return { position, type: 'task.created', change: 'created', recordId: `r-${position}`, tenantId, ownerId, data: { id: `r-${position}` }, createdAt: position.slice(0, 24) };
}

/** A stream over an in-memory partition, with the queries and lease calls it made. */
function streamOver(events: StreamEvent[], options: Partial<EventStreamOptions> = {}) {
  const reads: string[] = [];
  const released: StreamLease[] = [];
  const read = async (_partition: string, after: string): Promise<EventPage> => {
    reads.push(after);
    return { events: events.filter((e) => e.position > after).sort((a, b) => a.position.localeCompare(b.position)), more: false };
  };
  const stream = new EventStream({
    entity: tasks,
    viewer: alice,
    start: positionAt(Date.now() - 60_000),
    pollMs: 20,
    heartbeatMs: 60_000,
    retryMs: 1000,
    durationMs: 60_000,
    lease: { userId: 'alice', slot: 0, leaseId: 'l' },
    read,
    leases: { renew: async () => true, release: async (lease) => void released.push(lease) },
    ...options,
  });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, reads, released, text: () => text };
}

describe('event stream', () => {
  it('applies the row-level security of LIST', () => {
    expect(visibleTo(tasks, alice, change('p'))).toBe(true);
    expect(visibleTo(tasks, alice, change('p', 'bob'))).toBe(false);
    expect(visibleTo(tasks, { ...alice, admin: true }, change('p', 'bob'))).toBe(true);
    expect(visibleTo(tasks, { ...alice, admin: true }, change('p', 'bob', 't2'))).toBe(false);
    expect(visibleTo(shared, alice, change('p', 'bob'))).toBe(true);
    expect(visibleTo(shared, alice, change('p', 'bob', 't2'))).toBe(false);
  });

  it('sends settled events in order, skipping what the caller may not see, and holds back events younger than the settle time', async () => {
    const old = positionAt(Date.now() - 5000);
    const fresh = positionAt(Date.now() + 60_000);
    const { stream, reads, text } = streamOver([change(`${old}#b`), change(`${old}#a`), change(`${old}#c`, 'bob'), change(`${fresh}#z`)]);

    await sleep(120);
    stream.destroy();

    const ids = [...text().matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
    expect(ids.slice(1)).toEqual([`${old}#a`, `${old}#b`]);
    // The cursor stops before the unsettled event: every later poll asks again after #c.
    expect(reads.at(-1)).toBe(`${old}#c`);
    expect(SETTLE_MS).toBeGreaterThan(0);
  });

  it('sends an event that commits behind its position once, at once, without an id', async () => {
    const base = Date.now() - 5000;
    const events = [change(`${positionAt(base)}#a`), change(`${positionAt(base + 2000)}#c`)];
    const { stream, text } = streamOver(events, { lookbackEveryMs: 30 });
    await sleep(80);

    // Stamped between #a and #c, committed after the stream passed #c.
    events.push(change(`${positionAt(base + 1000)}#b`));
    await sleep(150);
    stream.destroy();

    const messages = text().split('\n\n').filter((m) => m.includes('task.created'));
    expect(messages.map((m) => /"id":"r-([^"]+)"/.exec(m)?.[1]?.slice(-1))).toEqual(['a', 'c', 'b']);
    expect(messages[2]).not.toMatch(/^id:/m);
    // The resume position stays at the last in-order event.
    const ids = [...text().matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
    expect(ids.at(-1)).toBe(`${positionAt(base + 2000)}#c`);
  });

  it('takes the events already in the look-back window when it starts as sent', async () => {
    const start = Date.now() - 5000;
    const before = change(`${positionAt(start - 1000)}#old`);
    const { stream, text } = streamOver([before], { start: positionAt(start), lookbackEveryMs: 20 });

    await sleep(100);
    stream.destroy();

    expect(text()).not.toContain('task.created');
  });

  it('a resumed stream sends, once and without an id, what committed behind its start while the client was away', async () => {
    const base = Date.now() - 5000;
    const events = [change(`${positionAt(base)}#a`), change(`${positionAt(base + 2000)}#c`)];
    const saved = new Map<string, Handoff>();
    const handoff = { load: async (id: string) => saved.get(id), save: async (id: string, h: Handoff) => void saved.set(id, { from: h.from, sent: new Set(h.sent) }) };
    const first = streamOver(events, { start: positionAt(base - 1000), durationMs: 150, lookbackEveryMs: 20, handoff });
    await new Promise((resolve) => first.stream.on('end', resolve));
    const lastId = [...first.text().matchAll(/^id: (.*)$/gm)].map((m) => m[1]).at(-1)!;
    const handedOver = saved.get(lastId)?.sent;

    // Stamped between #a and #c, committed after the first connection ended.
    events.push(change(`${positionAt(base + 1000)}#b`));
    const second = streamOver(events, { start: lastId, resumed: true, lookbackEveryMs: 20, handoff });
    await sleep(120);
    second.stream.destroy();

    expect(lastId).toBe(`${positionAt(base + 2000)}#c`);
    expect(handedOver).toEqual(new Set([`${positionAt(base)}#a`, `${positionAt(base + 2000)}#c`]));
    const messages = second.text().split('\n\n').filter((m) => m.includes('task.created'));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`r-${positionAt(base + 1000)}#b`);
    expect(messages[0]).not.toMatch(/^id:/m);
  });

  it('a resumed stream without a hand-off takes its window as sent', async () => {
    const base = Date.now() - 5000;
    const events = [change(`${positionAt(base)}#a`), change(`${positionAt(base + 1000)}#b`)];
    const { stream, text } = streamOver(events, { start: `${positionAt(base + 1000)}#b`, resumed: true, lookbackEveryMs: 20, handoff: { load: async () => undefined, save: async () => undefined } });

    await sleep(100);
    stream.destroy();

    expect(text()).not.toContain('task.created');
  });

  it('after a first pass cut short by a failed query, a late commit after its start is still sent', async () => {
    const start = Date.now() - 5000;
    const after = change(`${positionAt(start + 2000)}#after`);
    const late = change(`${positionAt(start + 1000)}#late`);
    let calls = 0;
    const read = async (_partition: string, from: string): Promise<EventPage> => {
      calls++;
      // The first pass: one page (the stream moves past #after), then the query fails.
      if (calls === 1) return { events: [after], more: true };
      if (calls === 2) throw new Error('engine down');
      return { events: [late, after].filter((e) => e.position > from), more: false };
    };
    const { stream, text } = streamOver([], { start: positionAt(start), read, lookbackEveryMs: 20 });

    await sleep(150);
    stream.destroy();

    const messages = text().split('\n\n').filter((m) => m.includes('task.created'));
    expect(messages.map((m) => /"id":"r-[^#]+#([a-z]+)"/.exec(m)?.[1])).toEqual(['after', 'late']);
  });

  it('stops polling and releases its lease when destroyed (the client went away)', async () => {
    const { stream, reads, released } = streamOver([]);
    await sleep(70);

    stream.destroy();
    const atDestroy = reads.length;
    await sleep(100);

    expect(atDestroy).toBeGreaterThan(0);
    expect(reads.length).toBe(atDestroy);
    expect(released).toHaveLength(1);
  });

  it('ends by itself after its duration, releasing the lease first', async () => {
    const { stream, released } = streamOver([], { durationMs: 50 });

    await new Promise((resolve) => stream.on('end', resolve));

    expect(released).toHaveLength(1);
  });

  it('ends when its lease was taken over (renewal refused)', async () => {
    const { stream } = streamOver([], { leases: { renew: async () => false, release: async () => undefined } });
    // Renewal runs on its own interval; call it as the timer would.
    await (stream as unknown as { renew(): Promise<void> }).renew();

    await new Promise((resolve) => stream.on('end', resolve));
    expect(stream.readableEnded).toBe(true);
  });
});
