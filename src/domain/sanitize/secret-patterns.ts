/**
 * Intake's secret formats, as data: every token format known by its prefix (prefixed-tokens.ts, at
 * any length from a minimum on), the context-dependent formats below, and the formats that
 * secretlint's recommended preset caught and the rest did not (ported from it in issue 34; a
 * differential test holds this table to the preset, kept as a dev dependency). Each entry says why
 * it is here, and names the keywords one of which every match contains (gitleaks' prefilter).
 *
 * Conventions: every regex is global; when only part of a match is secret it is the named group
 * `secret` (with the `d` flag for its indices); `accept` drops placeholders and code references.
 */
import { PREFIXED_TOKEN_PATTERNS } from './prefixed-tokens.js';

export interface SecretPattern {
  /** Stable snake_case name written as `[REDACTED:<kind>]`. */
  readonly kind: string;
  readonly regex: RegExp;
  readonly why: string;
  /** Second look at the candidate (quotes included, if any), with the whole match for context. */
  readonly accept?: (candidate: string, match: string) => boolean;
  /**
   * Lower-case texts of which every match contains one (compared with the text lower-cased): the
   * regex runs only on texts that hold one. Patterns without keywords say their `minLength`.
   */
  readonly keywords?: readonly string[];
  /** No match is shorter: shorter texts are not searched. */
  readonly minLength?: number;
}

/** Long runs of these are binary, not text; below this length base64 is ordinary ("dGVzdA=="). */
export const MIN_BINARY_PAYLOAD_LENGTH = 200;

const PLACEHOLDER =
  /^(?:<.*>|\$.*|%.*%|\{\{.*\}\}|\{.*\}|\*+|x+|\.+|null|undefined|none|true|false|string|number|password|passwd|pass|secret|token|changeme|example|redacted|\[REDACTED.*)$/i;
// `process.env.X`, `config.db.password`, `getToken()`, `os.getenv(`: code, not a value.
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+(?:\(.*)?$|^[A-Za-z_$][\w$]*\(/;

/**
 * The value inside matching quotes, which stay in the text so that JSON or code keeps its syntax.
 * A trailing backslash is the escape of the closing quote of JSON quoted inside a string.
 */
export function unquote(candidate: string): string {
  const first = candidate[0];
  const quoted = candidate.length >= 2 && (first === '"' || first === "'" || first === '`') && candidate.endsWith(first);
  if (!quoted) return candidate;
  const inner = candidate.slice(1, -1);
  return inner.endsWith('\\') ? inner.slice(0, -1) : inner;
}

function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value) || CODE_REFERENCE.test(value);
}

/**
 * A URL's password is a placeholder when it is a template or one of the words documentation uses
 * for one; short real words are not (`https://user:pass@host` is masked, as secretlint's basic-auth
 * rule masks it).
 */
const URL_PASSWORD_PLACEHOLDER =
  /^(?:<.*>|\$.*|%.*%|\{.*\}|\*+|x+|\.+|(?:my|your[_-]?)?password|changeme|redacted|\[REDACTED.*|replace[_-]with[_-]password)$/i;

/**
 * Assigned values: quoted ones and env-style `KEY=value` are values; other unquoted ones (after
 * `: ` or ` = `) must not read as an English word or an identifier ("Password: forgotten").
 */
function acceptAssignedValue(candidate: string, match: string): boolean {
  const value = unquote(candidate);
  if (value.length < 4 || isPlaceholder(value)) return false;
  const envStyle = /[\w"']=$/.test(match.slice(0, match.length - candidate.length));
  return value !== candidate || envStyle || /[^A-Za-z]/.test(value);
}

/**
 * Credentials in headers are opaque strings: they mix letter cases or digits. (No code check:
 * a JWT reads like a dotted property path.)
 */
function acceptOpaqueCredential(candidate: string): boolean {
  const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((c) => c.test(candidate)).length;
  return classes >= 2 && !PLACEHOLDER.test(candidate);
}

/** Random bytes in base64 use all three character classes; separator lines and words do not. */
function acceptBinary(candidate: string): boolean {
  return /[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /\d/.test(candidate);
}

const SECRET_KEY_WORD =
  'password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|credentials?';

const LONG = MIN_BINARY_PAYLOAD_LENGTH;
const PEM_LABEL = String.raw`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    kind: 'bearer_token',
    regex: /\bbearer\s+(?<secret>[\w\-.~+/]{16,}=*)/dgi,
    why: 'secretlint has no rule for HTTP bearer credentials (`Authorization: Bearer x` or a bare `Bearer x`).',
    accept: acceptOpaqueCredential,
    keywords: ['bearer'],
  },
  {
    kind: 'authorization_header',
    regex: /\bauthorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|token|digest|apikey)\s+)?(?<secret>[\w\-.~+/=:]{8,})/dgi,
    why: 'Basic/Token/Digest credentials in a pasted Authorization header; secretlint only knows basic-auth URLs.',
    accept: acceptOpaqueCredential,
    keywords: ['authorization'],
  },
  {
    kind: 'jwt',
    regex: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g,
    why: 'secretlint has no JWT rule; a JWT is a bearer credential wherever it appears.',
    keywords: ['eyj'],
  },
  ...PREFIXED_TOKEN_PATTERNS,
  { kind: 'mailchimp_api_key', regex: /\b[0-9a-f]{32}-us\d{1,2}\b/g, why: 'Not covered by secretlint.', keywords: ['-us'] },
  {
    kind: 'azure_storage_key',
    regex: /\bAccountKey=(?<secret>[A-Za-z0-9+/]{58,}={0,2})/dg,
    why: 'Not covered by secretlint; too short for the binary payload rule. 86 characters and `==`, masked from 58 (two-thirds).',
    keywords: ['accountkey='],
  },
  {
    kind: 'private_key',
    // The body cannot hold `-----`: a BEGIN without END costs a scan to the next dashes, not 16 KiB.
    regex: new RegExp(String.raw`${PEM_LABEL}(?:[^-]|-(?!----)){0,16384}-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`, 'g'),
    why: 'secretlint skips ENCRYPTED and PGP keys (header lines) and bodies that do not start with its magic bytes.',
    keywords: ['private key'],
  },
  {
    kind: 'private_key',
    regex: new RegExp(String.raw`${PEM_LABEL}(?:(?:\s|\\[rn])+[A-Za-z0-9+/=]{16,})+`, 'g'),
    why: 'A key pasted without its END line (truncated message) is still a key.',
    keywords: ['private key'],
  },
  {
    kind: 'binary_payload',
    regex: new RegExp(String.raw`\bdata:[\w.+-]+\/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,(?<secret>[A-Za-z0-9+/]{${LONG},}={0,2})`, 'dg'),
    why: 'Long binary payloads are masked; the media type stays readable.',
    keywords: [';base64,'],
  },
  {
    kind: 'binary_payload',
    regex: new RegExp(String.raw`(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{${LONG},}={0,2}`, 'g'),
    why: 'Long base64 or base64url runs: encoded files, keys or tokens of unknown formats.',
    accept: acceptBinary,
    minLength: LONG,
  },
  {
    kind: 'binary_payload',
    regex: new RegExp(String.raw`(?<![0-9A-Fa-f])[0-9A-Fa-f]{${LONG},}(?![0-9A-Fa-f])`, 'g'),
    why: 'Long hex dumps (lower-case hex is not caught by the base64 rule).',
    minLength: LONG,
  },
  {
    kind: 'url_credentials',
    regex: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@?#]{0,100}:(?<secret>[^\s:/?#]{1,200})@/dgi,
    why: "Any scheme's `user:password@` (secretlint's basic-auth rule wanted [-\\w] passwords on http/ftp; its database rule knew three schemes). The password runs to the last `@` before the host: an `@` in it is not the end.",
    accept: (candidate) => !URL_PASSWORD_PLACEHOLDER.test(candidate),
    keywords: ['://'],
  },
  // ---- Ported from secretlint's recommended preset (13.0.7), which ran beside this table until issue 34:
  // what its rules caught that the entries above miss. ----
  {
    kind: 'aws_secret_access_key',
    regex:
      /["']?(?:AWS|aws|Aws)?_?(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)_?(?:KEY|key|Key)["']?\s*(?::|=>|=)\s*["']?(?<secret>[A-Za-z0-9/+=]{40})["']?\b/dg,
    why: "secretlint's AWS rule: the 40 characters after an `aws_secret_access_key` name, named for what they are (the generic assignment below would say `secret_assignment`).",
    accept: (candidate) => candidate !== 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', // AWS's documentation example
    keywords: ['secret'],
  },
  {
    kind: 'slack_token',
    regex: /\b(?:xoxb|xoxp|xapp|xoxa|xoxo|xoxr)-(?:\d-)?(?:[a-zA-Z0-9]{1,40}-)+[a-zA-Z0-9]{1,40}\b/g,
    why: "secretlint's Slack rule takes segmented tokens of any length; the prefixed entry's minimum is for unsegmented runs.",
    keywords: ['xoxb-', 'xoxp-', 'xapp-', 'xoxa-', 'xoxo-', 'xoxr-'],
  },
  {
    kind: 'slack_webhook',
    regex: /https:\/\/hooks\.slack\.com\/services\/T[a-zA-Z0-9]{1,40}\/B[a-zA-Z0-9]{1,40}\/[a-zA-Z0-9]{1,40}/gi,
    why: "secretlint's Slack rule takes incoming-webhook URLs with a secret part of any length.",
    keywords: ['hooks.slack.com/services/'],
  },
  {
    kind: 'github_token',
    regex: /(?<!\p{L})ghs_[0-9]{1,20}_[A-Za-z0-9_-]{1,1000}\.[A-Za-z0-9_-]{1,10000}\.[A-Za-z0-9_-]{1,1000}(?![A-Za-z0-9_-])/gu,
    why: "secretlint's GitHub rule: app installation tokens (`ghs_<id>_` and a JWT), whose dots end the prefixed entry's run.",
    keywords: ['ghs_'],
  },
  {
    kind: 'secret_assignment',
    regex: new RegExp(
      String.raw`(?<![A-Za-z0-9])[A-Za-z0-9_.-]{0,40}?(?:${SECRET_KEY_WORD})\\?["']?\s*(?:=>|:=|=|:)\s*\\?(?<secret>"[^"\r\n]{4,256}"|'[^'\r\n]{4,256}'|[^\s"'\x60,;&)}\]]{4,256})`,
      'dgi',
    ),
    why: 'Generic `password=...`, `"api_key": "..."`, `DB_PASSWORD=...` assignments of any provider.',
    accept: acceptAssignedValue,
    // Every word of SECRET_KEY_WORD contains one of these.
    keywords: ['pass', 'secret', 'token', 'key', 'credential'],
  },
  {
    kind: 'secret_assignment',
    regex: /<(?<tag>[\w.-]{0,40}?(?:password|passwd|secret|token|api[_-]?key))>(?<secret>[^<\s]{4,256})<\/\k<tag>>/dgi,
    why: 'The same in XML configuration (`<password>...</password>`).',
    accept: (candidate) => !isPlaceholder(candidate),
    keywords: ['pass', 'secret', 'token', 'key'],
  },
];
