import type { FieldError } from '../errors.js';

/** One sentence-level row of a supplied transcript (spec: Create a recording, Utterance). */
export interface Utterance {
  startSec: number;
  endSec: number;
  speaker: number;
  text: string;
}

/** The read shape of a transcript row (spec: Transcript entry): no internal ids. */
export interface TranscriptEntry extends Utterance {
  recordingId: string;
}

/** Spec limits: the first two answer 413, the per-utterance one is an ordinary 400 field error. */
export const TRANSCRIPT_LIMITS = { utterances: 10_000, totalCharacters: 2_000_000, characters: 20_000 } as const;

/** Enough to fix a transcript; a broken 10,000-row upload must not produce a 10,000-item error body. */
const MAX_ERRORS = 50;

/**
 * Ordering and timing problems that make a transcript a 400. One pass with the last end per
 * speaker, so 10,000 utterances cost 10,000 steps.
 */
export function transcriptErrors(utterances: readonly Utterance[]): FieldError[] {
  const errors: FieldError[] = [];
  const lastEndBySpeaker = new Map<number, number>();
  let previousStart = -Infinity;
  for (let i = 0; i < utterances.length && errors.length < MAX_ERRORS; i += 1) {
    const utterance = utterances[i];
    if (!utterance) continue;
    const path = `body.transcript.utterances.${i}`;
    for (const problem of utteranceProblems(utterance, previousStart, lastEndBySpeaker.get(utterance.speaker))) {
      errors.push({ path: `${path}.${problem.field}`, message: problem.message });
    }
    // Non-decreasing means each row against the one before it: one misplaced row yields few errors.
    previousStart = utterance.startSec;
    // The furthest end so far, so an utterance overlapping any earlier one of its speaker is caught.
    lastEndBySpeaker.set(utterance.speaker, Math.max(lastEndBySpeaker.get(utterance.speaker) ?? -Infinity, utterance.endSec));
  }
  return errors.slice(0, MAX_ERRORS);
}

interface Problem {
  field: keyof Utterance;
  message: string;
}

function utteranceProblems(utterance: Utterance, previousStart: number, speakerLastEnd: number | undefined): Problem[] {
  const problems: Problem[] = [];
  // Readers page and merge rows in order; the spec requires ordering by startSec.
  if (utterance.startSec < previousStart) {
    problems.push({ field: 'startSec', message: 'must not be before the startSec of the previous utterance' });
  }
  // One voice cannot say two things at once; touching (start == previous end) is fine.
  if (speakerLastEnd !== undefined && utterance.startSec < speakerLastEnd) {
    problems.push({ field: 'startSec', message: `must not overlap the previous utterance of speaker ${utterance.speaker}` });
  }
  if (utterance.endSec < utterance.startSec) {
    problems.push({ field: 'endSec', message: 'must be at least startSec' });
  }
  const textProblem = utteranceTextProblem(utterance.text);
  if (textProblem) problems.push({ field: 'text', message: textProblem });
  return problems;
}

function utteranceTextProblem(text: string): string | null {
  // A blank row carries nothing to analyse and would show as an empty line.
  if (text.trim() === '') return 'must not be blank';
  if (text.length > TRANSCRIPT_LIMITS.characters) return `must be at most ${TRANSCRIPT_LIMITS.characters} characters`;
  return null;
}

/**
 * The 413 limits, checked on the raw body before schema validation so an oversized transcript is
 * refused before the validator walks it. Accepts the `transcript` object (`{utterances}`) or the
 * utterance array itself, and skips whatever it cannot count: the schema reports malformed input.
 */
export function transcriptLimitError(rawTranscript: unknown): 'too_many_utterances' | 'transcript_too_large' | null {
  const utterances = rawUtterances(rawTranscript);
  if (!utterances) return null;
  if (utterances.length > TRANSCRIPT_LIMITS.utterances) return 'too_many_utterances';
  let total = 0;
  for (const item of utterances) {
    const text: unknown = typeof item === 'object' && item !== null ? (item as { text?: unknown }).text : undefined;
    if (typeof text !== 'string') continue;
    total += text.length;
    if (total > TRANSCRIPT_LIMITS.totalCharacters) return 'transcript_too_large';
  }
  return null;
}

function rawUtterances(raw: unknown): readonly unknown[] | null {
  if (Array.isArray(raw)) return raw as unknown[];
  if (typeof raw !== 'object' || raw === null) return null;
  const utterances: unknown = (raw as { utterances?: unknown }).utterances;
  return Array.isArray(utterances) ? (utterances as unknown[]) : null;
}

/**
 * Participant speakers that say nothing in the transcript (the spec requires each to appear at
 * least once when a transcript is supplied), each once, in the order the participants list them.
 */
export function missingSpeakers(participantSpeakers: readonly number[], utterances: readonly Utterance[]): number[] {
  const speaking = new Set(utterances.map((utterance) => utterance.speaker));
  return [...new Set(participantSpeakers)].filter((speaker) => !speaking.has(speaker));
}

/**
 * The monologue view (spec: Get a transcript): contiguous rows of one speaker become one block
 * starting with the first row, ending at the block's latest end, texts joined with one space.
 * Other fields (such as `recordingId`) come from the block's first row; the input is not changed.
 */
export function toMonologues<T extends Utterance>(rows: readonly T[]): T[] {
  const blocks: T[] = [];
  let texts: string[] = [];
  for (const row of rows) {
    const current = blocks[blocks.length - 1];
    if (current && current.speaker === row.speaker) {
      current.endSec = Math.max(current.endSec, row.endSec);
      texts.push(row.text);
      continue;
    }
    if (current) current.text = texts.join(' ');
    blocks.push({ ...row });
    texts = [row.text];
  }
  const last = blocks[blocks.length - 1];
  if (last) last.text = texts.join(' ');
  return blocks;
}
