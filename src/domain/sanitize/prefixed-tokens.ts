import type { SecretPattern } from './secret-patterns.js';

/**
 * Tokens recognised by their prefix. secretlint's rules (and this table until issue 15) match the
 * provider's standard length: a token a few characters longer was not matched at all (`{36}` then a
 * boundary) or only up to a cap, which left its tail in the text, and a shorter one was not matched.
 * Here, as in gitleaks' rule sets, a format is its prefix and the whole run of its alphabet once the
 * run reaches a minimum, and the whole match is masked. (secretlint ran beside this table until
 * issue 34; its segmented Slack formats, which it took at any length, are ported in secret-patterns.ts.)
 *
 * The minimum is two-thirds of the standard body, or the shortest body that a rule (this table's or
 * secretlint's) already accepted, when that is shorter.
 *
 * Cost: each body is one character class taken greedily, so a match is one pass over the run. Where
 * a word boundary follows the run (`\b`), a failed boundary gives the run back once, from a prefix
 * that itself must follow a boundary: linear in the text.
 */
interface PrefixedToken {
  readonly kind: string;
  /** Regular-expression source of the prefix or prefixes. */
  readonly prefix: string;
  /** Character class of the body. */
  readonly body: string;
  /** Shortest body masked. */
  readonly min: number;
  /** The provider's standard body, which `min` comes from. */
  readonly standard: string;
  readonly why: string;
  /** Before the prefix; by default not a letter (secretlint's `(?<!\p{L})`). */
  readonly before?: string;
  /** After the run: padding, a suffix or a boundary. */
  readonly after?: string;
}

const SECRETLINT_FIXED = 'secretlint matches the standard length only.';

const TOKENS: readonly PrefixedToken[] = [
  {
    kind: 'aws_access_key_id',
    prefix: 'A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA',
    body: '[A-Z0-9]',
    min: 12,
    standard: '16',
    before: String.raw`\b`,
    after: String.raw`\b`,
    why: "AWS documents ids of 16 to 128 characters; secretlint's scan wants 20 and, when on, masks any `account: 1234-5678-9012`.",
  },
  { kind: 'github_token', prefix: 'gh[pousr]_', body: '[A-Za-z0-9_]', min: 24, standard: '36', why: SECRETLINT_FIXED },
  { kind: 'github_token', prefix: 'github_pat_', body: '[A-Za-z0-9_]', min: 55, standard: '22_59', why: SECRETLINT_FIXED },
  {
    kind: 'gitlab_token',
    prefix: 'gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|agent)-',
    body: String.raw`[\w-]`,
    min: 14,
    standard: '20',
    before: String.raw`(?<![\w-])`,
    why: 'secretlint knows personal access tokens (`glpat-`) only, up to 128 characters.',
  },
  {
    kind: 'slack_token',
    prefix: 'xox[abeoprs]-|xapp-',
    body: '[A-Za-z0-9-]',
    min: 34,
    standard: '12-13-24 (bot)',
    why: 'secretlint stops at a segment longer than 40 characters and leaves it.',
  },
  {
    kind: 'slack_webhook',
    prefix: String.raw`https?://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/`,
    body: '[A-Za-z0-9]',
    min: 16,
    standard: '24',
    before: '',
    why: 'secretlint masks the first 40 characters of the secret part only.',
  },
  {
    kind: 'stripe_key',
    prefix: '[sr]k_(?:live|test)_',
    body: '[A-Za-z0-9]',
    min: 24,
    standard: '99 (24 for old keys)',
    why: 'secretlint takes 24 to 99 characters.',
  },
  {
    kind: 'stripe_webhook_secret',
    prefix: 'whsec_',
    body: '[A-Za-z0-9+/=]',
    min: 22,
    standard: '32',
    before: String.raw`\b`,
    why: 'secretlint covers Stripe API keys, not webhook signing secrets.',
  },
  {
    kind: 'openai_api_key',
    prefix: 'sk-(?:proj|svcacct|admin)-',
    body: String.raw`[\w-]`,
    min: 40,
    standard: '74T3BlbkFJ74',
    before: String.raw`(?<![\w-])`,
    why: 'secretlint needs the `T3BlbkFJ` marker and exact lengths; keys without them exist.',
  },
  {
    kind: 'openai_api_key',
    prefix: 'sk-',
    body: '[A-Za-z0-9]',
    min: 32,
    standard: '48',
    before: String.raw`(?<![\w-])`,
    why: 'Legacy keys; secretlint needs the `T3BlbkFJ` marker and 20 characters either side.',
  },
  {
    kind: 'anthropic_api_key',
    prefix: String.raw`sk-ant-(?:api|admin|oat|ort)\d{2}-`,
    body: String.raw`[\w-]`,
    min: 32,
    standard: '93AA',
    before: String.raw`(?<![\w-])`,
    why: 'secretlint wants an `api0N` key of 90-128 characters ending in `AA`; admin keys and others differ.',
  },
  {
    kind: 'google_api_key',
    prefix: 'AIza',
    body: String.raw`[\w-]`,
    min: 24,
    standard: '35',
    before: String.raw`\b`,
    why: 'secretlint only detects GCP service-account files (.json/.p12), not API keys in text.',
  },
  {
    kind: 'google_oauth_client_secret',
    prefix: 'GOCSPX-',
    body: String.raw`[\w-]`,
    min: 19,
    standard: '28',
    before: String.raw`\b`,
    why: 'Not covered by secretlint.',
  },
  {
    kind: 'google_oauth_token',
    prefix: String.raw`ya29\.`,
    body: String.raw`[\w-]`,
    min: 20,
    standard: 'about 150',
    before: String.raw`\b`,
    why: 'Not covered by secretlint.',
  },
  {
    kind: 'twilio_api_key',
    prefix: 'SK',
    body: '[0-9a-f]',
    min: 22,
    standard: '32',
    before: String.raw`\b`,
    after: String.raw`\b`,
    why: 'Not covered by secretlint; `SK` is a short prefix, so a word boundary on both sides.',
  },
  {
    kind: 'twilio_account_sid',
    prefix: 'AC',
    body: '[0-9a-f]',
    min: 22,
    standard: '32',
    before: String.raw`\b`,
    after: String.raw`\b`,
    why: 'Not covered by secretlint; half of a Twilio credential pair, masked with the key.',
  },
  {
    kind: 'sendgrid_api_key',
    prefix: String.raw`SG\.[\w-]{15,}\.`,
    body: String.raw`[\w-]`,
    min: 29,
    standard: '22.43',
    why: 'secretlint stops at 128 characters a part; the minimum of the first part is two-thirds of 22 too.',
  },
  {
    kind: 'npm_token',
    prefix: 'npm_',
    body: '[A-Za-z0-9]',
    min: 24,
    standard: '36',
    why: `${SECRETLINT_FIXED} No \`_\` in the body: \`npm_config_*\` variables are not tokens.`,
  },
  {
    kind: 'pypi_token',
    prefix: 'pypi-AgEIcHlwaS5vcmc',
    body: String.raw`[\w-]`,
    min: 50,
    standard: 'about 150',
    before: String.raw`\b`,
    why: 'Not covered by secretlint.',
  },
  { kind: 'huggingface_token', prefix: 'hf_', body: '[A-Za-z]', min: 23, standard: '34', why: SECRETLINT_FIXED },
  {
    kind: 'shopify_token',
    prefix: 'shp(?:pa|ca|at|ss)_',
    body: '[A-Za-z0-9]',
    min: 22,
    standard: '32',
    why: 'secretlint takes 32 to 64 characters.',
  },
  {
    kind: 'grafana_token',
    prefix: 'glc_',
    body: '[A-Za-z0-9+/]',
    min: 32,
    standard: 'about 100',
    after: '={0,2}',
    why: 'secretlint takes 32 to 400 characters.',
  },
  { kind: 'grafana_token', prefix: 'glsa_', body: '[A-Za-z0-9_]', min: 28, standard: '32_8', why: SECRETLINT_FIXED },
  {
    kind: 'onepassword_token',
    prefix: 'ops_(?=ey)',
    body: '[A-Za-z0-9+/]',
    min: 100,
    standard: 'about 230',
    after: '={0,2}',
    why: 'secretlint takes 100 to 1280 characters of base64 JSON ending in `fQ`; a cut token does not end so.',
  },
  { kind: 'groq_api_key', prefix: 'gsk_', body: '[A-Za-z0-9]', min: 35, standard: '52', why: SECRETLINT_FIXED },
  {
    kind: 'linear_api_key',
    prefix: 'lin_api_',
    body: '[A-Za-z0-9_]',
    min: 27,
    standard: '40',
    why: 'secretlint takes 32 to 128 characters.',
  },
  { kind: 'notion_token', prefix: 'ntn_', body: '[A-Za-z0-9]', min: 31, standard: '11 digits, 35', why: SECRETLINT_FIXED },
  {
    kind: 'vault_token',
    prefix: String.raw`hv[sr]\.`,
    body: String.raw`[\w-]`,
    min: 64,
    standard: '95',
    why: 'secretlint takes 90 to 120 characters.',
  },
  {
    kind: 'vault_token',
    prefix: String.raw`hvb\.`,
    body: String.raw`[\w-]`,
    min: 92,
    standard: '138',
    why: 'secretlint takes 138 to 300 characters.',
  },
  {
    kind: 'vercel_token',
    prefix: 'vc[piark]_',
    body: '[A-Za-z0-9]',
    min: 16,
    standard: '24',
    why: 'secretlint takes 20 to 60 characters.',
  },
  {
    kind: 'databricks_token',
    prefix: 'dapi',
    body: '[0-9A-Fa-f]',
    min: 22,
    standard: '32',
    after: String.raw`(?:-\d)?`,
    why: SECRETLINT_FIXED,
  },
  { kind: 'docker_token', prefix: 'dckr_pat_', body: String.raw`[\w-]`, min: 18, standard: '27', why: SECRETLINT_FIXED },
  { kind: 'figma_token', prefix: 'figd_', body: String.raw`[\w-]`, min: 27, standard: '40', why: 'secretlint takes 40 to 200 characters.' },
  { kind: 'cloudflare_token', prefix: 'cfk_|cfut_|cfat_', body: '[A-Za-z0-9]', min: 32, standard: '40 and 8 hex', why: SECRETLINT_FIXED },
  {
    kind: 'tailscale_key',
    prefix: 'tskey-[a-z]{2,20}-',
    body: String.raw`[\w-]`,
    min: 25,
    standard: '12-30',
    why: 'secretlint takes 8 to 40, a dash, then 16 to 60 characters.',
  },
  {
    kind: 'intake_api_key',
    prefix: 'ik_',
    body: String.raw`[\w-]`,
    min: 29,
    standard: '43 (256 bits, base64url)',
    before: String.raw`(?<![\w-])`,
    why: "Intake's own organization API keys: a key pasted into a chat must not be served to every reader.",
  },
  {
    kind: 'intake_ingest_secret',
    prefix: 'iak_',
    body: String.raw`[\w-]`,
    min: 29,
    standard: '43 (256 bits, base64url)',
    before: String.raw`(?<![\w-])`,
    why: "Intake's own agent ingest secrets, likewise.",
  },
  {
    kind: 'mailgun_api_key',
    prefix: 'key-',
    body: '[0-9a-f]',
    min: 22,
    standard: '32',
    before: String.raw`\b`,
    after: String.raw`\b`,
    why: 'Not covered by secretlint; `key-` is a common word, so a word boundary on both sides.',
  },
  {
    kind: 'discord_webhook',
    prefix: String.raw`https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/`,
    body: String.raw`[\w-]`,
    min: 30,
    standard: '68',
    before: '',
    why: 'Not covered by secretlint.',
  },
];

function toPattern(token: PrefixedToken): SecretPattern {
  const { kind, prefix, body, min, standard, before = '(?<![A-Za-z])', after = '' } = token;
  const keywords = requiredLiterals(prefix);
  return {
    kind,
    regex: new RegExp(`${before}(?:${prefix})${body}{${min},}${after}`, 'g'),
    why: `${token.why} Standard body ${standard}; masked from ${min} characters, whatever follows in the alphabet.`,
    ...(keywords ? { keywords } : { minLength: min }),
  };
}

/**
 * For each alternative of a prefix's regex source, the longest run of characters every match of
 * it contains (lower-cased): literal characters outside classes and groups, each taken only when
 * no quantifier makes it optional or repeated. Null when an alternative has none.
 */
export function requiredLiterals(source: string): string[] | null {
  const runs: string[] = [];
  for (const alternative of topLevelAlternatives(source)) {
    let best = '';
    let run = '';
    const end = () => {
      if (run.length > best.length) best = run;
      run = '';
    };
    for (let i = 0; i < alternative.length; i++) {
      const c = alternative[i]!;
      if (c === '[' || c === '(') {
        end();
        i = closing(alternative, i);
        continue;
      }
      if (c === '{') {
        end();
        i = alternative.indexOf('}', i);
        continue;
      }
      let literal: string | null = null;
      if (c === '\\') {
        const escaped = alternative[++i]!;
        literal = /[A-Za-z0-9]/.test(escaped) ? null : escaped;
      } else if (!'.^$|?*+{}'.includes(c)) {
        literal = c;
      }
      const next = alternative[i + 1];
      if (literal === null || (next !== undefined && '?*{'.includes(next))) {
        end();
        continue;
      }
      run += literal.toLowerCase();
      if (next === '+') end();
    }
    end();
    if (!best) return null;
    runs.push(best);
  }
  return [...new Set(runs)];
}

function topLevelAlternatives(source: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') i++;
    else if (c === '[' || c === '(') i = closing(source, i);
    else if (c === '|') {
      parts.push(source.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(source.slice(start));
  return parts;
}

/** The index of the `]` or `)` closing the class or group opened at `open`. */
function closing(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') i++;
    else if (source[open] === '[') {
      if (c === ']' && i > open) return i;
    } else if (c === '[') i = closing(source, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new Error(`unbalanced regex source: ${source}`);
}

export const PREFIXED_TOKEN_PATTERNS: readonly SecretPattern[] = TOKENS.map(toPattern);
