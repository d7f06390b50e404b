import { DefaultLogger, type LogLevel } from '@temporalio/worker';

/**
 * The Temporal SDK's own log level: its INFO lines include the whole webpack report of the workflow
 * bundle, so it speaks at WARN unless LOG_LEVEL asks for debug or trace.
 */
export function sdkLogger(level: string): DefaultLogger {
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', error: 'ERROR', fatal: 'ERROR' };
  return new DefaultLogger(map[level] ?? 'WARN');
}
