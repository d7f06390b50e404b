import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { TelemetryOptions } from '@temporalio/worker';
import type { Logger } from '../logger.js';

/** Expected of the media queue's worker, which runs activities only: not worth a warning. */
const EXPECTED = new Set(['No workflows registered, not polling for workflow tasks']);

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's logs (the worker's, workflows' `log`, activities' `Context.log` and, forwarded,
 * the Rust core's) as lines of the process's pino logger, with the names the rest of Intake's logs
 * use: `workflowId`, `runId`, `activityType`. The activity's task token (it completes the activity)
 * is never written. The webpack report of a workflow bundle built at start goes to debug.
 */
export function sdkLogger(logger: Logger): TemporalLogger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    let pinoLevel = PINO_LEVEL[level];
    if (EXPECTED.has(message) || (level === 'INFO' && message.includes('\n') && message.includes('webpack'))) pinoLevel = 'debug';
    if (!logger.isLevelEnabled(pinoLevel)) return;
    logger[pinoLevel](meta ? renamed(meta) : {}, message);
  };
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

function renamed(meta: LogMetadata): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (key === 'taskToken') continue;
    if (key === 'workflowRunId') out.runId = value;
    else if (key === 'error' || key === 'failure') out.err = value;
    else out[key] = value;
  }
  return out;
}

/**
 * The core's own logs, forwarded to the SDK logger above: at INFO with LOG_LEVEL info or debug
 * (its DEBUG lines carry task tokens and whole history events), at TRACE only with trace. While it
 * forwards, the Runtime keeps the process alive until it shuts down (on SIGINT/SIGTERM, or by the
 * caller that installed it with no shutdown signals before it exits).
 */
export function sdkLogging(level: string): TelemetryOptions['logging'] {
  const core = ({ trace: 'TRACE', debug: 'INFO', info: 'INFO' } as const)[level as 'trace'] ?? 'WARN';
  return { filter: { core, other: 'ERROR' }, forward: {} };
}
