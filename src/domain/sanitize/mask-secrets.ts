import { SECRET_PATTERNS, unquote, type SecretPattern } from './secret-patterns.js';

/**
 * Built-in secret masking: the pattern table of secret-patterns.ts, selected by one keyword scan
 * and run synchronously. Found ranges are merged and each replaced by `[REDACTED:<kind>]`; the
 * output depends only on the input text. `findSecrets` and `redact` let the sanitizer merge these
 * ranges with those of configured texts.
 *
 * Until issue 34, secretlint's recommended preset ran beside the table, once per string: a
 * file-linting engine (26 rules registered per call, ~50 µs even on a short string, a profiler to
 * switch off, a comment filter to keep out) that took a quarter of the API's time on large ingests.
 * What it still caught is ported into the table; a differential test against the preset (now a dev
 * dependency) and its own test corpus keep it so.
 */

/** A range of a text to replace. */
export interface Redaction {
  readonly start: number;
  readonly end: number;
  /** `[REDACTED:<kind>]` for a secret. */
  readonly replacement: string;
  /** Breaks ties between redactions of the same range: lowest first (configured texts, then table order). */
  readonly priority: number;
}

export function maskSecrets(text: string): string {
  return redact(text, findSecrets(text));
}

export function findSecrets(text: string): Redaction[] {
  return text.length === 0 ? [] : tableFindings(text);
}

const mask = (kind: string): string => `[REDACTED:${kind}]`;

/**
 * Every keyword of the table in one regex, longest first: at each position it finds the longest
 * keyword starting there; the keywords that are prefixes of it are there too (PREFIXES).
 */
const KEYWORDS = [...new Set(SECRET_PATTERNS.flatMap((p) => p.keywords ?? []))].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
const KEYWORD_SCAN = new RegExp(KEYWORDS.map((k) => k.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|'), 'g');
const PREFIXES = new Map(KEYWORDS.map((k) => [k, KEYWORDS.filter((other) => k.startsWith(other))]));

/** The table's keywords the text holds (compared lower-cased), found in one scan. */
function keywordsIn(text: string): Set<string> {
  const lower = text.toLowerCase();
  const found = new Set<string>();
  // Synchronous: the shared regex's lastIndex is this call's alone.
  KEYWORD_SCAN.lastIndex = 0;
  for (let m = KEYWORD_SCAN.exec(lower); m; m = KEYWORD_SCAN.exec(lower)) {
    for (const k of PREFIXES.get(m[0])!) found.add(k);
    // From the next position, not after the match: a keyword may start inside it.
    KEYWORD_SCAN.lastIndex = m.index + 1;
  }
  return found;
}

/**
 * The table's patterns, run only on texts that can hold a match: one scan for every keyword of the
 * table (gitleaks' keyword prefilter) instead of every regex on every text. `all`: every pattern
 * runs (the reference the prefilter is tested against).
 */
export function tableFindings(text: string, o: { all?: boolean } = {}): Redaction[] {
  const findings: Redaction[] = [];
  for (const index of o.all ? ALL_PATTERNS : candidatePatterns(text)) patternFindings(text, SECRET_PATTERNS[index]!, index + 1, findings);
  return findings;
}

/** Table indices of the patterns each keyword selects, and of the patterns selected by length. */
const BY_KEYWORD = new Map<string, number[]>();
const BY_LENGTH: { index: number; minLength: number }[] = [];
SECRET_PATTERNS.forEach((pattern, index) => {
  if (!pattern.keywords) BY_LENGTH.push({ index, minLength: pattern.minLength ?? 0 });
  for (const keyword of pattern.keywords ?? []) BY_KEYWORD.set(keyword, [...(BY_KEYWORD.get(keyword) ?? []), index]);
});
const SHORTEST_BY_LENGTH = Math.min(...BY_LENGTH.map((p) => p.minLength));
const ALL_PATTERNS: readonly number[] = SECRET_PATTERNS.map((_, index) => index);

/** The patterns that can match in `text`, in table order (the order breaks ties between equal ranges). */
function candidatePatterns(text: string): readonly number[] {
  const present = keywordsIn(text);
  if (present.size === 0 && text.length < SHORTEST_BY_LENGTH) return [];
  const selected = new Set<number>();
  for (const keyword of present) for (const index of BY_KEYWORD.get(keyword)!) selected.add(index);
  for (const { index, minLength } of BY_LENGTH) if (text.length >= minLength) selected.add(index);
  return [...selected].sort((x, y) => x - y);
}

function patternFindings(text: string, pattern: SecretPattern, priority: number, findings: Redaction[]): void {
  for (const match of text.matchAll(pattern.regex)) {
    const group = match.indices?.groups?.secret;
    const [start, end] = group ?? [match.index, match.index + match[0].length];
    const candidate = text.slice(start, end);
    if (pattern.accept && !pattern.accept(candidate, match[0])) continue;
    const value = unquote(candidate);
    const offset = value.length === candidate.length ? 0 : 1;
    findings.push({ start: start + offset, end: start + offset + value.length, replacement: mask(pattern.kind), priority });
  }
}

/**
 * Replaces the ranges; overlapping ones become one, replaced as the one that starts first (the
 * longest, on a tie). The result depends only on the text and the set of ranges.
 */
export function redact(text: string, redactions: readonly Redaction[]): string {
  const sorted = redactions.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || b.end - a.end || a.priority - b.priority);
  const parts: string[] = [];
  let cursor = 0;
  let current: { start: number; end: number; replacement: string } | undefined;
  for (const redaction of sorted) {
    if (current && redaction.start < current.end) {
      current.end = Math.max(current.end, redaction.end);
      continue;
    }
    if (current) cursor = emit(text, parts, cursor, current);
    current = { ...redaction };
  }
  if (current) cursor = emit(text, parts, cursor, current);
  parts.push(text.slice(cursor));
  return parts.join('');
}

function emit(text: string, parts: string[], cursor: number, range: { start: number; end: number; replacement: string }): number {
  parts.push(text.slice(cursor, range.start), range.replacement);
  return range.end;
}
