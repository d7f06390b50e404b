import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';

/** Expected of the media queue's worker, which runs activities only: not worth a warning. */
const EXPECTED = new Set(['No workflows registered, not polling for workflow tasks']);

/**
 * The Temporal SDK's own log level: its INFO lines include the whole webpack report of the workflow
 * bundle, so it speaks at WARN unless LOG_LEVEL asks for debug or trace.
 */
export function sdkLogger(level: string): DefaultLogger {
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', error: 'ERROR', fatal: 'ERROR' };
  const write = new DefaultLogger(map[level] ?? 'WARN');
  return new DefaultLogger(map[level] ?? 'WARN', (entry: LogEntry) => {
    if (entry.level === 'WARN' && EXPECTED.has(entry.message)) return;
    write.log(entry.level, entry.message, entry.meta);
  });
}
