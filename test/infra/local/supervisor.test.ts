import { describe, expect, it, vi } from 'vitest';
import { countRestarts, restartDelay, Supervisor, type RestartPolicy, type Running } from '../../../infra/local/supervisor.js';

const FAST: RestartPolicy = { initialDelayMs: 1, maxDelayMs: 4, maxRestarts: 3, windowMs: 60_000 };

/** A part whose instances end when the test says so. */
function fakePart() {
  const ends: ((reason: string) => void)[] = [];
  const instance = (): Running => ({ ended: new Promise<string>((resolve) => ends.push(resolve)) });
  return { instance, end: (reason = 'crashed') => ends.at(-1)!(reason), started: () => ends.length };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe('restart policy', () => {
  it('doubles the wait before each restart in a row, up to its ceiling', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => restartDelay(n))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it('gives up once more restarts than allowed fall within the window', () => {
    const now = 1_000_000;
    const policy = { ...FAST, maxRestarts: 2, windowMs: 1000 };

    expect(countRestarts([now - 5000, now - 500, now], now, policy)).toEqual({ recent: [now - 500, now], giveUp: false });
    expect(countRestarts([now - 900, now - 500, now], now, policy).giveUp).toBe(true);
  });
});

describe('Supervisor', () => {
  it('restarts a part that ends, reporting it down until it runs again', async () => {
    const part = fakePart();
    let release!: () => void;
    const restarting = new Promise<void>((resolve) => (release = resolve));
    const supervisor = new Supervisor(() => undefined, FAST);
    supervisor.watch('engine', part.instance(), {
      essential: true,
      advice: 'do something',
      restart: async () => {
        await restarting;
        return part.instance();
      },
    });

    part.end();
    await until(() => supervisor.down().length > 0);
    const whileDown = { down: supervisor.down(), essential: supervisor.essentialDown() };
    release();
    await until(() => supervisor.down().length === 0);

    expect(whileDown).toEqual({ down: ['engine'], essential: true });
    expect(supervisor.down()).toEqual([]);
    expect(part.started()).toBe(2);
    supervisor.stop();
  });

  it('reports a part that is not essential as down without making requests wait', async () => {
    const part = fakePart();
    const supervisor = new Supervisor(() => undefined, FAST);
    supervisor.watch('s3', part.instance(), { advice: '', restart: () => new Promise<Running>(() => undefined) });

    part.end();
    await until(() => supervisor.down().length > 0);

    expect(supervisor.down()).toEqual(['s3']);
    expect(supervisor.essentialDown()).toBe(false);
    supervisor.stop();
  });

  it('gives up after repeated failures with a message naming the part, the last reason and the advice', async () => {
    const part = fakePart();
    const onGiveUp = vi.fn();
    const supervisor = new Supervisor(onGiveUp, FAST);
    supervisor.watch('DynamoDB Local', part.instance(), {
      advice: 'Check free memory, then run npm start again.',
      restart: async () => {
        throw new Error('exit code 1: out of memory');
      },
    });

    part.end('killed by SIGKILL');
    await until(() => onGiveUp.mock.calls.length > 0);

    expect(onGiveUp).toHaveBeenCalledTimes(1);
    expect(onGiveUp.mock.calls[0][0]).toBe(
      'DynamoDB Local failed 4 times within 60 s (last: exit code 1: out of memory); not restarting it again. Check free memory, then run npm start again.',
    );
    expect(supervisor.down()).toEqual(['DynamoDB Local']);
  });

  it('does not restart a part that ends after the supervisor was stopped', async () => {
    const part = fakePart();
    const restart = vi.fn(async () => part.instance());
    const supervisor = new Supervisor(() => undefined, FAST);
    supervisor.watch('engine', part.instance(), { advice: '', restart });

    supervisor.stop();
    part.end('SIGTERM');
    await new Promise((r) => setTimeout(r, 30));

    expect(restart).not.toHaveBeenCalled();
    expect(supervisor.down()).toEqual([]);
  });
});
