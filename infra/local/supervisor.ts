/**
 * Keeps the parts of `npm start` running: DynamoDB Local, the local S3 server and the webhook
 * workers. A part that ends on its own is started again after a back-off (0.5 s, 1 s, 2 s, … up
 * to 8 s); while it is down the runtime reports it (health `degraded`, the gateway's 503s). A
 * part that ends more than `maxRestarts` times within `windowMs` is given up on: the runtime
 * stops with a message saying what to do, rather than restarting it forever.
 */
export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxRestarts: number;
  windowMs: number;
}

export const RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 8_000, maxRestarts: 5, windowMs: 120_000 };

/** The wait before the `attempt`-th restart in a row (1-based). */
export function restartDelay(attempt: number, policy: RestartPolicy = RESTART_POLICY): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}

/** The restarts that still count at `now` (those within the window), and whether they are too many. */
export function countRestarts(times: readonly number[], now: number, policy: RestartPolicy = RESTART_POLICY): { recent: number[]; giveUp: boolean } {
  const recent = times.filter((t) => now - t < policy.windowMs);
  return { recent, giveUp: recent.length > policy.maxRestarts };
}

export type PartState = 'up' | 'restarting' | 'failed';

/** One running instance of a part: `ended` settles when it stops without being asked to. */
export interface Running {
  ended: Promise<string>;
}

export interface PartOptions {
  /** Starts the part again (same port, same files); throws when it cannot. */
  restart(): Promise<Running>;
  /** What a person should do when the part keeps failing (ends the give-up message). */
  advice: string;
  /** While this part is down, requests are answered 503 (the engine); otherwise only health says so. */
  essential?: boolean;
}

export class Supervisor {
  private readonly states = new Map<string, { state: PartState; essential: boolean }>();
  private stopping = false;
  private readonly wakers = new Set<() => void>();

  constructor(
    /** Called once a part is given up on, with the message to print. */
    private readonly onGiveUp: (message: string) => void,
    private readonly policy: RestartPolicy = RESTART_POLICY,
  ) {}

  /** Parts not running now. */
  down(): string[] {
    return [...this.states].filter(([, s]) => s.state !== 'up').map(([name]) => name);
  }

  /** Whether a part requests depend on is down: the gateway answers 503 meanwhile. */
  essentialDown(): boolean {
    return [...this.states.values()].some((s) => s.essential && s.state !== 'up');
  }

  /** Watches `first`; each time the running instance ends, restarts it under the policy. */
  watch(name: string, first: Running, options: PartOptions): void {
    this.states.set(name, { state: 'up', essential: options.essential ?? false });
    void this.loop(name, first, options);
  }

  /** Stops supervising: whatever ends from now on was asked to. */
  stop(): void {
    this.stopping = true;
    for (const wake of [...this.wakers]) wake();
  }

  private set(name: string, state: PartState): void {
    const entry = this.states.get(name)!;
    entry.state = state;
  }

  /** Sleeps `ms`, or less when the supervisor stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  private async loop(name: string, first: Running, options: PartOptions): Promise<void> {
    let current = first;
    let restarts: number[] = [];
    for (;;) {
      let reason = await current.ended;
      if (this.stopping) return;
      this.set(name, 'restarting');
      // On the console, not the log: it is what a person running npm start needs to see.
      console.error(`${name} stopped (${reason}); restarting it`);
      for (let attempt = 1; ; attempt++) {
        const counted = countRestarts([...restarts, Date.now()], Date.now(), this.policy);
        restarts = counted.recent;
        if (counted.giveUp) {
          this.set(name, 'failed');
          this.onGiveUp(
            `${name} failed ${restarts.length} times within ${Math.round(this.policy.windowMs / 1000)} s (last: ${reason}); not restarting it again. ${options.advice}`,
          );
          return;
        }
        await this.pause(restartDelay(attempt, this.policy));
        if (this.stopping) return;
        try {
          current = await options.restart();
          break;
        } catch (error) {
          reason = (error as Error).message;
          console.error(`${name} did not restart (${reason})`);
        }
      }
      if (this.stopping) return;
      this.set(name, 'up');
      console.error(`${name} restarted`);
    }
  }
}
