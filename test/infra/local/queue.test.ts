/**
 * The local queue's SQS semantics, on a journal in a temporary directory: visibility timeout,
 * delay, receive count, redrive to the dead-letter queue, and nothing lost when the process
 * ends without closing (a new instance replays the journal).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalQueue } from '../../../infra/local/queue.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'local-queue-'));
  vi.useFakeTimers({ toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function queues() {
  const dlq = new LocalQueue({ name: 'dlq', file: join(dir, 'dlq.jsonl'), visibilityTimeoutSeconds: 30 });
  const queue = new LocalQueue({ name: 'q', file: join(dir, 'q.jsonl'), visibilityTimeoutSeconds: 30, maxReceiveCount: 2, deadLetter: dlq });
  return { queue, dlq };
}

describe('LocalQueue', () => {
  it('hides a received message for the visibility timeout, then returns it with a higher receive count', () => {
    const { queue } = queues();
    queue.send('a');
    const [first] = queue.receive();
    expect(first.receiveCount).toBe(1);
    expect(queue.receive()).toEqual([]);
    vi.advanceTimersByTime(30_001);
    const [again] = queue.receive();
    expect(again).toMatchObject({ body: 'a', receiveCount: 2, messageId: first.messageId });
  });

  it('delays a message sent with a delay', () => {
    const { queue } = queues();
    queue.send('later', 10);
    expect(queue.receive()).toEqual([]);
    vi.advanceTimersByTime(10_000);
    expect(queue.receive().map((m) => m.body)).toEqual(['later']);
  });

  it('deletes with the current receipt only; a visibility change moves the next receive', () => {
    const { queue } = queues();
    queue.send('b');
    const [m] = queue.receive();
    queue.changeVisibility(m.receiptHandle, 5);
    vi.advanceTimersByTime(5_000);
    const [m2] = queue.receive();
    queue.delete(m.receiptHandle);
    expect(queue.size).toBe(1);
    queue.delete(m2.receiptHandle);
    expect(queue.size).toBe(0);
  });

  it('moves a message to the dead-letter queue once it was received maxReceiveCount times', () => {
    const { queue, dlq } = queues();
    queue.send('poison');
    for (let i = 0; i < 2; i++) {
      const [m] = queue.receive();
      queue.changeVisibility(m.receiptHandle, 0);
    }
    expect(queue.receive()).toEqual([]);
    expect(queue.size).toBe(0);
    expect(dlq.receive().map((m) => m.body)).toEqual(['poison']);
  });

  it('keeps every message across an abrupt end; a dead consumer’s lease returns, a back-off stays', () => {
    const first = queues();
    first.queue.send('leased');
    first.queue.send('backing-off');
    first.queue.send('done');
    const received = first.queue.receive(3);
    first.queue.changeVisibility(received.find((m) => m.body === 'backing-off')!.receiptHandle, 600);
    first.queue.delete(received.find((m) => m.body === 'done')!.receiptHandle);
    // No close(): as after kill -9.
    const second = queues();
    expect(second.queue.receive().map((m) => `${m.body}:${m.receiveCount}`)).toEqual(['leased:2']);
    vi.advanceTimersByTime(600_000);
    expect(second.queue.receive().map((m) => m.body)).toEqual(['backing-off']);
  });

  it('compacts its journal as it grows without losing messages', () => {
    const { queue } = queues();
    for (let i = 0; i < 1500; i++) {
      queue.send(`m${i}`);
      const [m] = queue.receive(1);
      if (i % 100 !== 0) queue.delete(m.receiptHandle);
    }
    const reopened = queues().queue;
    expect(reopened.size).toBe(15);
  });
});
