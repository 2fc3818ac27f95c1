/**
 * Progress of long work: a bar with rate and ETA on a terminal (cli-progress, on stderr), plain
 * lines every few seconds otherwise (logs, CI), so that stdout stays the data (export).
 *
 * Ctrl-C while it runs: the bar stops (which shows the terminal's cursor again: the bar hides it),
 * a line says where the work stopped and what to do next (`onInterrupt`), and the process ends
 * with 130, the shell's code for an interrupt.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, extra?: { failed?: number }): void;
  stop(): void;
}

/** Stops the bar on Ctrl-C (SIGINT, or SIGTERM), says `message(done)` and exits 130; returns the handler's remover. */
function onInterrupt(stopBar: () => void, stream: NodeJS.WriteStream, message: (done: number) => string, done: () => number): () => void {
  const handler = () => {
    stopBar();
    stream.write(`\n${message(done())}\n`);
    process.exit(130);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.removeListener('SIGINT', handler);
    process.removeListener('SIGTERM', handler);
  };
}

function seconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 90) return `${Math.round(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function progress(
  label: string,
  total: number,
  options: { failures?: boolean; interrupted?: (done: number) => string } = {},
  stream: NodeJS.WriteStream = process.stderr,
): Progress {
  const started = Date.now();
  const failures = options.failures ?? true;
  const interrupted = options.interrupted ?? ((done: number) => `${label} interrupted after ${done} of ${total} rows.`);
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} |{bar}| {percentage}% {value}/{total} rows | {rate} rows/s | ETA {eta_formatted}${failures ? ' | {failed} failed' : ''}`,
        etaBuffer: 20,
        fps: 5,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { rate: 0, failed: 0 });
    let done = 0;
    const release = onInterrupt(() => bar.stop(), stream, interrupted, () => done);
    return {
      update(now, extra = {}) {
        done = now;
        const rate = now / Math.max((Date.now() - started) / 1000, 0.001);
        bar.update(now, { rate: Math.round(rate), failed: extra.failed ?? 0 });
      },
      stop: () => {
        release();
        bar.stop();
      },
    };
  }
  let lastLine = 0;
  const line = (done: number, failed: number) => {
    const elapsed = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = done / elapsed;
    const pct = total ? Math.floor((done / total) * 100) : 100;
    stream.write(`${label}: ${done}/${total} rows (${pct}%), ${Math.round(rate)} rows/s, ETA ${seconds((total - done) / rate)}${failures ? `, ${failed} failed` : ''}\n`);
  };
  let last = { done: 0, failed: 0 };
  const release = onInterrupt(() => undefined, stream, interrupted, () => last.done);
  return {
    update(done, extra = {}) {
      last = { done, failed: extra.failed ?? 0 };
      if (Date.now() - lastLine >= 2000 || done === total) {
        lastLine = Date.now();
        line(done, last.failed);
      }
    },
    stop() {
      release();
      if (lastLine === 0 || last.done !== total) line(last.done, last.failed);
    },
  };
}
