import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig, SecretLintCoreResultMessage } from '@secretlint/types';
import { SECRET_PATTERNS, unquote, type SecretPattern } from './secret-patterns.js';

/**
 * Built-in secret masking: secretlint's recommended preset (maintained detectors) plus the
 * hand-written table of secret-patterns.ts. Found ranges are merged and each replaced by
 * `[REDACTED:<kind>]`; the output depends only on the input text. `findSecrets` and `redact` let
 * the sanitizer merge these ranges with those of configured texts.
 */

// The profiler is on by default: it records ~60 performance marks per call and never drops them,
// a leak in a long-running service, and it doubles the cost of a call.
secretLintProfiler.setEnabled(false);

const RULE_PREFIX = '@secretlint/secretlint-rule-';
const FILTER_COMMENTS_ID = `${RULE_PREFIX}filter-comments`;

// The preset's rules are registered one by one, without filter-comments: `secretlint-disable`
// comments would let whoever writes a chat message switch masking off. (`disabled: true` in a
// preset's `rules` is not honoured by @secretlint/core 13.0.7: preset rules run regardless.)
const CONFIG: SecretLintCoreConfig = {
  rules: recommendedRules.filter((rule) => rule.meta.id !== FILTER_COMMENTS_ID).map((rule) => ({ id: rule.meta.id, rule })),
};

/** Kinds of secretlint findings, by message id where one rule reports several, else by rule. */
const MESSAGE_KINDS: Readonly<Record<string, string>> = {
  AWSAccessKeyID: 'aws_access_key_id',
  AWSAccountID: 'aws_account_id',
  AWSSecretAccessKey: 'aws_secret_access_key',
  PackageJSON_xOauthToken: 'github_token',
  IncomingWebhook: 'slack_webhook',
};
const RULE_KINDS: Readonly<Record<string, string>> = {
  aws: 'aws_secret_access_key',
  gcp: 'private_key',
  privatekey: 'private_key',
  npm: 'npm_token',
  basicauth: 'basic_auth_credentials',
  slack: 'slack_token',
  sendgrid: 'sendgrid_api_key',
  shopify: 'shopify_token',
  stripe: 'stripe_key',
  github: 'github_token',
  gitlab: 'gitlab_token',
  grafana: 'grafana_token',
  openai: 'openai_api_key',
  anthropic: 'anthropic_api_key',
  groq: 'groq_api_key',
  huggingface: 'huggingface_token',
  linear: 'linear_api_key',
  notion: 'notion_token',
  '1password': 'onepassword_token',
  'database-connection-string': 'database_connection_string',
  'hashicorp-vault': 'vault_token',
  vercel: 'vercel_token',
  databricks: 'databricks_token',
  docker: 'docker_token',
  figma: 'figma_token',
  cloudflare: 'cloudflare_token',
  tailscale: 'tailscale_key',
};

/** A range of a text to replace. */
export interface Redaction {
  readonly start: number;
  readonly end: number;
  /** `[REDACTED:<kind>]` for a secret. */
  readonly replacement: string;
  /** Breaks ties between redactions of the same range: lowest first (secretlint 0, then table order). */
  readonly priority: number;
}

/**
 * A secretlint run costs ~50 µs whatever the length, and requests carry many short strings (model
 * names, labels, ids). Every credential format it knows is longer than this in practice (the
 * shortest are credential URLs such as `mysql://ab:cdef@h`, 17 characters).
 */
const SECRETLINT_MIN_LENGTH = 12;

export async function maskSecrets(text: string): Promise<string> {
  return redact(text, await findSecrets(text));
}

export async function findSecrets(text: string): Promise<Redaction[]> {
  if (text.length === 0) return [];
  const fromSecretlint = text.length < SECRETLINT_MIN_LENGTH ? [] : await secretlintFindings(text);
  return [...fromSecretlint, ...tableFindings(text)];
}

const mask = (kind: string): string => `[REDACTED:${kind}]`;

async function secretlintFindings(text: string): Promise<Redaction[]> {
  const result = await lintSource({
    // A neutral name and extension: `.json` would make the GCP rule report the whole text.
    source: { content: text, filePath: 'chat-message.txt', ext: '.txt', contentType: 'text' },
    options: { config: CONFIG, noPhysicFilePath: true },
  });
  return result.messages.map((message) => {
    const [start, end] = locate(text, message);
    return { start, end, replacement: mask(kindOf(message)), priority: 0 };
  });
}

function kindOf(message: SecretLintCoreResultMessage): string {
  const rule = message.ruleId.startsWith(RULE_PREFIX) ? message.ruleId.slice(RULE_PREFIX.length) : message.ruleId;
  return MESSAGE_KINDS[message.messageId] ?? RULE_KINDS[rule] ?? 'secret';
}

/**
 * Some rules report a range that starts at the match but has the length of the captured secret
 * (AWS `aws_secret_access_key = x` covers the key name and leaves the end of the secret). The
 * reported secret is in the message data: find it from the range start.
 */
function locate(text: string, message: SecretLintCoreResultMessage): readonly [number, number] {
  const [start, end] = message.range;
  const values = Object.values(message.data ?? {}).filter((v): v is string => typeof v === 'string' && v.length >= 8);
  const reported = text.slice(start, end);
  if (values.length === 0 || values.includes(reported)) return message.range;
  for (const value of values) {
    const at = text.indexOf(value, start);
    if (at !== -1 && at - start <= 512) return [at, at + value.length];
  }
  return message.range;
}

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
  const present = o.all ? null : keywordsIn(text);
  return SECRET_PATTERNS.flatMap((pattern, index) => {
    const possible =
      !present || (pattern.keywords ? pattern.keywords.some((k) => present.has(k)) : text.length >= (pattern.minLength ?? 0));
    return possible ? patternFindings(text, pattern, index + 1) : [];
  });
}

function patternFindings(text: string, pattern: SecretPattern, priority: number): Redaction[] {
  const findings: Redaction[] = [];
  for (const match of text.matchAll(pattern.regex)) {
    const group = match.indices?.groups?.secret;
    const [start, end] = group ?? [match.index, match.index + match[0].length];
    const candidate = text.slice(start, end);
    if (pattern.accept && !pattern.accept(candidate, match[0])) continue;
    const value = unquote(candidate);
    const offset = value.length === candidate.length ? 0 : 1;
    findings.push({ start: start + offset, end: start + offset + value.length, replacement: mask(pattern.kind), priority });
  }
  return findings;
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
