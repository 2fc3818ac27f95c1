/**
 * The local runtime's message queue, with the SQS semantics the delivery function relies on:
 * at-least-once delivery, a visibility timeout per receive (ChangeMessageVisibility moves it),
 * a delay on send, a receive count per message, and redrive to a dead-letter queue once a message
 * has been received maxReceiveCount times. Durable in DATA_DIR: every change is appended to a
 * journal (written before the call returns) that is replayed at start and compacted as it grows,
 * so a kill -9 loses no message. A lease held by a process that died returns at the next start
 * (no other consumer can hold it); a visibility set on purpose (a retry's back-off) is kept.
 */
import { randomBytes, createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface QueueMessage {
  id: string;
  body: string;
  sentAt: number;
  /** Epoch ms from which a receive may return it. */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** Set while a receive's lease holds it (not a visibility set on purpose). */
  leased?: boolean;
  receipt?: string;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  sentAt: number;
  firstReceivedAt: number;
}

export interface LocalQueueOptions {
  name: string;
  /** The journal file; undefined keeps the queue in memory. */
  file?: string;
  visibilityTimeoutSeconds: number;
  /** Redrive: a message received this many times goes to `deadLetter` on the next receive. */
  maxReceiveCount?: number;
  deadLetter?: LocalQueue;
}

type JournalEntry =
  | { op: 'send'; m: QueueMessage }
  | { op: 'recv'; id: string; visibleAt: number; receiveCount: number; receipt: string; firstReceivedAt: number }
  | { op: 'vis'; id: string; visibleAt: number }
  | { op: 'del'; id: string };

export class LocalQueue {
  readonly name: string;
  private readonly messages = new Map<string, QueueMessage>();
  private fd: number | undefined;
  private journalEntries = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: LocalQueueOptions) {
    this.name = options.name;
    if (options.file) this.load(options.file);
  }

  get size(): number {
    return this.messages.size;
  }

  /** Messages that a receive could return now or later (not counting those in flight). */
  counts(now = Date.now()): { visible: number; inFlightOrDelayed: number } {
    let visible = 0;
    for (const m of this.messages.values()) if (m.visibleAt <= now) visible++;
    return { visible, inFlightOrDelayed: this.messages.size - visible };
  }

  send(body: string, delaySeconds = 0): string {
    const now = Date.now();
    const message: QueueMessage = { id: randomBytes(16).toString('hex'), body, sentAt: now, visibleAt: now + delaySeconds * 1000, receiveCount: 0 };
    this.apply({ op: 'send', m: message });
    this.wake();
    return message.id;
  }

  /** Up to `max` visible messages, each leased for the visibility timeout. */
  receive(max = 10, visibilityTimeoutSeconds = this.options.visibilityTimeoutSeconds): ReceivedMessage[] {
    const now = Date.now();
    const out: ReceivedMessage[] = [];
    for (const m of this.messages.values()) {
      if (out.length >= max) break;
      if (m.visibleAt > now) continue;
      if (this.options.maxReceiveCount && this.options.deadLetter && m.receiveCount >= this.options.maxReceiveCount) {
        // SQS moves the message when a receive would exceed maxReceiveCount.
        this.options.deadLetter.send(m.body);
        this.apply({ op: 'del', id: m.id });
        continue;
      }
      const receipt = `${m.id}.${m.receiveCount + 1}.${randomBytes(6).toString('hex')}`;
      this.apply({ op: 'recv', id: m.id, visibleAt: now + visibilityTimeoutSeconds * 1000, receiveCount: m.receiveCount + 1, receipt, firstReceivedAt: m.firstReceivedAt ?? now });
      out.push({ messageId: m.id, receiptHandle: receipt, body: m.body, receiveCount: m.receiveCount, sentAt: m.sentAt, firstReceivedAt: m.firstReceivedAt! });
    }
    return out;
  }

  /** Deletes a received message; a stale receipt (the message was received again since) is ignored, as SQS may. */
  delete(receiptHandle: string): void {
    const m = this.byReceipt(receiptHandle);
    if (m) this.apply({ op: 'del', id: m.id });
  }

  changeVisibility(receiptHandle: string, seconds: number): void {
    const m = this.byReceipt(receiptHandle);
    if (!m) throw new Error(`ReceiptHandleIsInvalid: ${receiptHandle}`);
    this.apply({ op: 'vis', id: m.id, visibleAt: Date.now() + seconds * 1000 });
    if (seconds === 0) this.wake();
  }

  /** Resolves when a message may have become visible, or after `ms`. */
  waitForMessages(ms: number): Promise<void> {
    const now = Date.now();
    let next = now + ms;
    for (const m of this.messages.values()) if (m.visibleAt < next) next = m.visibleAt;
    const wait = Math.max(0, next - now);
    if (wait === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.waiters.add(done);
    });
  }

  /** Every message as stored (tests, diagnostics). */
  peek(): QueueMessage[] {
    return [...this.messages.values()].map((m) => ({ ...m }));
  }

  close(): void {
    for (const wake of [...this.waiters]) wake();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private byReceipt(receipt: string): QueueMessage | undefined {
    const id = receipt.split('.')[0];
    const m = this.messages.get(id);
    return m && m.receipt === receipt ? m : undefined;
  }

  /** Ends every pending waitForMessages (a consumer stopping). */
  wakeWaiters(): void {
    this.wake();
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private apply(entry: JournalEntry): void {
    this.mutate(entry);
    if (this.options.file) {
      // Written before the caller goes on: a kill -9 after this line keeps the change.
      writeSync(this.fd!, `${JSON.stringify(entry)}\n`);
      this.journalEntries++;
      if (this.journalEntries > 2000 && this.journalEntries > 4 * this.messages.size) this.compact();
    }
  }

  private mutate(entry: JournalEntry): void {
    switch (entry.op) {
      case 'send':
        this.messages.set(entry.m.id, { ...entry.m });
        break;
      case 'recv': {
        const m = this.messages.get(entry.id);
        if (m) Object.assign(m, { visibleAt: entry.visibleAt, receiveCount: entry.receiveCount, receipt: entry.receipt, firstReceivedAt: entry.firstReceivedAt, leased: true });
        break;
      }
      case 'vis': {
        const m = this.messages.get(entry.id);
        if (m) Object.assign(m, { visibleAt: entry.visibleAt, leased: false });
        break;
      }
      case 'del':
        this.messages.delete(entry.id);
        break;
    }
  }

  private load(file: string): void {
    mkdirSync(dirname(file), { recursive: true });
    if (existsSync(file)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      for (const line of lines) {
        if (!line) continue;
        try {
          this.mutate(JSON.parse(line) as JournalEntry);
        } catch {
          // A line cut short by a kill -9 while it was written: the change it carried never returned.
        }
      }
      const now = Date.now();
      for (const m of this.messages.values()) {
        if (m.leased && m.visibleAt > now) m.visibleAt = now;
        m.leased = false;
        m.receipt = undefined;
      }
    }
    this.compact();
  }

  /** Rewrites the journal as one `send` per live message (atomically: a new file renamed over the old). */
  private compact(): void {
    const file = this.options.file!;
    if (this.fd !== undefined) closeSync(this.fd);
    const tmp = `${file}.${createHash('sha1').update(String(process.pid)).digest('hex').slice(0, 8)}.tmp`;
    writeFileSync(tmp, [...this.messages.values()].map((m) => `${JSON.stringify({ op: 'send', m } satisfies JournalEntry)}\n`).join(''));
    renameSync(tmp, file);
    this.fd = openSync(file, 'a');
    this.journalEntries = this.messages.size;
  }
}
