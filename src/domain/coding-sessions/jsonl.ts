import { isObject, SessionParseError, type JsonObject, type Line } from './types.js';

const MAX_LISTED = 20;

/** "2, 4" or "2, 4, … (25 lines)" */
export function lineList(lines: readonly number[]): string {
  const listed = lines.slice(0, MAX_LISTED).join(', ');
  return lines.length > MAX_LISTED ? `${listed}, … (${lines.length} lines)` : listed;
}

/**
 * The JSON objects of a JSONL file, one per non-blank line, with their 1-based line numbers.
 * A line that is not JSON, or JSON that is not an object, fails the whole file, naming every such line.
 * A file that is one JSON document spread over several lines (Codex's older `.json` sessions, or a
 * normalized `{events: [...]}` document) is returned as a single object on line 1.
 */
export function readJsonl(content: string): Line[] {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  if (text.trim() === '') throw new SessionParseError('the file is empty');
  const lines: Line[] = [];
  const invalid: number[] = [];
  const notObjects: number[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      invalid.push(i + 1);
      return;
    }
    if (isObject(value)) lines.push({ line: i + 1, value });
    else notObjects.push(i + 1);
  });
  if (invalid.length === 0 && notObjects.length === 0) return lines;

  const whole = wholeDocument(text);
  if (whole) return [{ line: 1, value: whole }];
  const problems = [
    invalid.length ? `invalid JSON on line ${lineList(invalid)}` : '',
    notObjects.length ? `not a JSON object on line ${lineList(notObjects)}` : '',
  ].filter(Boolean);
  throw new SessionParseError(
    problems.join('; '),
    [...invalid, ...notObjects].sort((a, b) => a - b),
  );
}

function wholeDocument(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value)) return { events: value };
    return isObject(value) && (Array.isArray(value.items) || Array.isArray(value.events)) ? value : null;
  } catch {
    return null;
  }
}
