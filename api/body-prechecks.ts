import { transcriptLimitError } from '../src/domain/transcript.js';
import { AppError } from '../src/errors.js';

/**
 * Checks that come before a route's schema, whatever path its body takes (parsed on the event loop,
 * or by a body-checking thread for large bodies): one answer for one body. Named, because a thread
 * receives the name, not the function.
 */
export const BODY_PRECHECKS = {
  /**
   * Spec 413s of a recording's transcript (`too_many_utterances`, `transcript_too_large`): an
   * oversized transcript is a 413 also when the rest of the body would be a 400.
   */
  transcriptLimits(body: unknown): void {
    const limit = transcriptLimitError((body as { transcript?: unknown } | null | undefined)?.transcript);
    if (limit) throw new AppError(limit);
  },
} satisfies Record<string, (body: unknown) => void>;

export type BodyPrecheck = keyof typeof BODY_PRECHECKS;
