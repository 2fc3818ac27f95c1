/**
 * One Powertools logger per process: JSON lines, never secrets (callers log ids, not keys).
 *
 * Created on first use: Powertools, the node:console and node:crypto it imports and the stdout
 * stream it opens cost a cold start nothing until something is logged (most requests of the
 * health check never log). Its calls stay synchronous: once the logger has loaded, a call writes
 * its line at once, as Powertools does; a call made while it loads is written as soon as it has,
 * in call order. `logsWritten()` resolves when no line is pending: every family's handler awaits
 * it before it returns (shared/http/request-metrics.ts), so Lambda never freezes the process
 * with a line still unwritten.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { onFirstUse } from './on-first-use.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
type LogArguments = Parameters<Logger['info']>;

let instance: Logger | undefined;
let pending: Promise<void> = Promise.resolve();
/** Lines waiting for the logger: later calls queue behind them, so lines keep their order. */
let queued = 0;
/** A level set before the logger exists (tests), applied when it is created. */
let levelOverride: LogLevel | undefined;

function configuredLevel(): LogLevel {
  return (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'INFO';
}

const createLogger = onFirstUse(() =>
  import('@aws-lambda-powertools/logger').then(
    ({ Logger: PowertoolsLogger }) =>
      (instance = new PowertoolsLogger({
        serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'entity-record-api',
        logLevel: levelOverride ?? configuredLevel(),
      })),
  ),
);

/** The Powertools logger, created by the first call (a failed import is retried by the next). */
export function loadLogger(): Promise<Logger> {
  return instance ? Promise.resolve(instance) : createLogger();
}

function print(logger: Logger, level: Level, args: LogArguments): void {
  (logger[level] as (...line: LogArguments) => void).apply(logger, args);
}

function write(level: Level, args: LogArguments): void {
  if (instance && queued === 0) {
    print(instance, level, args);
    return;
  }
  // Written when the logger has loaded; if it cannot load, the line goes to the console as is.
  queued += 1;
  pending = Promise.all([pending, loadLogger()])
    .then(
      ([, logger]) => print(logger, level, args),
      () => console[level](...(args as unknown[])),
    )
    .finally(() => {
      queued -= 1;
    });
}

/** Resolves when every line logged so far has been written. */
export function logsWritten(): Promise<void> {
  return pending;
}

export const logger = {
  debug: (...args: LogArguments): void => write('debug', args),
  info: (...args: LogArguments): void => write('info', args),
  warn: (...args: LogArguments): void => write('warn', args),
  error: (...args: LogArguments): void => write('error', args),
  getLevelName: (): LogLevel => (instance?.getLevelName() as LogLevel | undefined) ?? levelOverride ?? configuredLevel(),
  setLogLevel: (level: LogLevel): void => {
    levelOverride = level;
    instance?.setLogLevel(level);
  },
};
