/**
 * The logger is created on first use: a line logged while Powertools loads is written once it
 * has, in call order, and a family's handler returns only when its lines are written.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext, proxyEvent } from '../support/events.js';

type LoggerModule = typeof import('../../shared/logger.js');

let lines: Record<string, unknown>[];

/** A fresh module graph: no logger loaded yet. */
async function freshLogger(): Promise<LoggerModule> {
  vi.resetModules();
  const module = await import('../../shared/logger.js');
  module.logger.setLogLevel('INFO');
  return module;
}

beforeEach(() => {
  lines = [];
  // Powertools writes INFO and DEBUG to stdout, WARN and ERROR to stderr.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (!text.startsWith('{"level"')) return write(chunk, ...rest);
      lines.push(JSON.parse(text) as Record<string, unknown>);
      return true;
    }) as typeof stream.write);
  }
});

afterEach(() => vi.restoreAllMocks());

describe('logger', () => {
  it('writes the lines logged while it loads in call order, by the time logsWritten() resolves', async () => {
    const { logger, logsWritten } = await freshLogger();

    logger.warn('first', { requestId: 'r1' });
    logger.error('second', { error: new Error('boom') });
    logger.info('third');
    await logsWritten();

    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['WARN', 'first'],
      ['ERROR', 'second'],
      ['INFO', 'third'],
    ]);
    expect(lines[0]).toMatchObject({ service: 'entity-record-api', requestId: 'r1' });
    expect(lines[1].error).toMatchObject({ name: 'Error', message: 'boom' });
  });

  it('writes at once when it has loaded, and honours the level', async () => {
    const { logger, loadLogger } = await freshLogger();
    await loadLogger();

    logger.debug('hidden');
    logger.info('shown');

    expect(lines.map((l) => l.message)).toEqual(['shown']);
  });

  it("has a family's handler return only once the lines its request logged are written", async () => {
    const { logger } = await freshLogger();
    const { createPublicHandler } = await import('../../shared/http/public-stack.js');
    const { healthRoutes } = await import('../../shared/route-declarations/index.js');
    const handler = createPublicHandler(healthRoutes, {
      getHealth: async () => {
        logger.warn('health check failed', { error: 'TimeoutError' });
        return { data: { ok: true } };
      },
    });

    const result = await handler(proxyEvent({ method: 'GET', path: '/api/health' }), lambdaContext());

    expect(result.statusCode).toBe(200);
    expect(lines).toEqual([expect.objectContaining({ level: 'WARN', message: 'health check failed', error: 'TimeoutError' })]);
  });
});
