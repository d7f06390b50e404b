/**
 * A start-up failure of the dev stack that the user can act on: what failed and what to do, printed
 * as one line (`Intake failed to start: …`) before a non-zero exit, with no stack trace.
 */
export class StartupError extends Error {
  constructor(
    readonly what: string,
    readonly todo: string,
  ) {
    super(`${what.replace(/(?<![.\s])[.\s]+$/, '')}. To fix: ${todo.replace(/(?<![.\s])[.\s]+$/, '')}.`);
    this.name = 'StartupError';
  }
}

/** The one line `npm start` ends with when it cannot start. */
export function startupFailureLine(error: unknown): string {
  const message =
    error instanceof StartupError
      ? error.message
      : String((error as Error)?.message ?? error)
          .split('\n')[0]!
          .trim();
  return `Intake failed to start: ${message.replace(/(?<!\s)\s*\n\s*/g, ' ')}`;
}
