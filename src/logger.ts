import { pino, type Logger } from 'pino';

export type { Logger };

/** Header and field names whose values are credentials: never written to a log. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-api-key"]',
  'req.headers["x-service-agent-key"]',
  'req.headers.cookie',
  '*.apiKey',
  '*.accessToken',
  '*.secret',
  '*.password',
  '*.signingSecret',
  '*.databaseUrl',
];

export function createLogger(level: string, name = 'intake'): Logger {
  return pino({
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
