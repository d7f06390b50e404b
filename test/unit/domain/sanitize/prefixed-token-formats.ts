import { ALNUM, B64, B64URL, DIGITS, fakeSecrets, HEX, LOWER, UPPER } from './fake-secrets.js';
/**
 * Prefix-identified token formats for the length-variant corpus of mask-secrets.test.ts (issue 15):
 * each with a body of the provider's standard length and the shortest body that must be masked.
 * The minimums are written out here, not read from the source, so that the test pins them.
 */
export interface PrefixedFormat {
  readonly name: string;
  readonly kind: string;
  readonly prefix: string;
  /** A body of the standard length, without padding. */
  readonly body: string;
  /** Characters that lengthen the body. */
  readonly alphabet: string;
  /** The shortest body masked; one character less is left alone. */
  readonly min: number;
  /** Base64 padding, after the body whatever its length. */
  readonly padding?: string;
  /** Only the body is masked: the prefix is a key name and stays. */
  readonly keepsPrefix?: boolean;
  /** secretlint's rule masks this format at any length, below the minimum too. */
  readonly anyLength?: boolean;
}

// Generated (seeded) rather than written out: literal tokens would trip secret scanners on this repository.
const fake = fakeSecrets(20260115);

/** The issue's example, exactly: 38 characters after `ghp_` (the standard is 36). */
export const ISSUE_EXAMPLE = ['ghp', '1234567890abcdefghijklmnopqrstuvwxyzAB'].join('_');

/** Lengthening goes up to this many characters past the standard body. */
export const MAX_EXTRA = 150;

/** 1Password service-account tokens are base64 JSON; 3n+1 bytes end in "fQ==". */
function onePasswordBody(): string {
  let json = `{"email":"${fake(LOWER, 12)}@1passwordserviceaccounts.lcl","secretKey":"${fake(UPPER + DIGITS, 30)}","srpX":"${fake(HEX, 64)}"`;
  while ((json.length + 1) % 3 !== 1) json += ' ';
  return Buffer.from(`${json}}`).toString('base64').slice(0, -2);
}

type Row = [name: string, kind: string, prefix: string, body: string, alphabet: string, min: number, options?: Partial<PrefixedFormat>];

const ROWS: readonly Row[] = [
  ['AWS access key id', 'aws_access_key_id', 'AKIA', fake(UPPER + DIGITS, 16), UPPER + DIGITS, 12],
  ['AWS temporary access key id', 'aws_access_key_id', 'ASIA', fake(UPPER + DIGITS, 16), UPPER + DIGITS, 12],
  ['Intake API key', 'intake_api_key', 'ik_', fake(B64URL, 43), ALNUM, 29],
  ['Intake ingest secret', 'intake_ingest_secret', 'iak_', fake(B64URL, 43), ALNUM, 29],
  ['GitHub classic token', 'github_token', 'ghp_', fake(ALNUM, 36), ALNUM, 24],
  ['GitHub OAuth token', 'github_token', 'gho_', fake(ALNUM, 36), ALNUM, 24],
  ['GitHub user-to-server token', 'github_token', 'ghu_', fake(ALNUM, 36), ALNUM, 24],
  ['GitHub server token', 'github_token', 'ghs_', fake(ALNUM, 36), ALNUM, 24],
  ['GitHub refresh token', 'github_token', 'ghr_', fake(ALNUM, 36), ALNUM, 24],
  ['GitHub fine-grained token', 'github_token', 'github_pat_', `${fake(ALNUM, 22)}_${fake(ALNUM, 59)}`, ALNUM, 55],
  ['GitLab personal token', 'gitlab_token', 'glpat-', fake(ALNUM, 20), ALNUM, 14],
  ['GitLab runner token', 'gitlab_token', 'glrt-', fake(ALNUM, 20), ALNUM, 14],
  ['Slack bot token', 'slack_token', 'xoxb-', `${fake(DIGITS, 12)}-${fake(DIGITS, 13)}-${fake(ALNUM, 24)}`, ALNUM, 34, { anyLength: true }],
  [
    'Slack user token',
    'slack_token',
    'xoxp-',
    `${fake(DIGITS, 12)}-${fake(DIGITS, 12)}-${fake(DIGITS, 13)}-${fake(HEX, 32)}`,
    HEX,
    34,
    { anyLength: true },
  ],
  [
    'Slack app token',
    'slack_token',
    'xapp-',
    `1-A${fake(UPPER + DIGITS, 10)}-${fake(DIGITS, 13)}-${fake(HEX, 64)}`,
    HEX,
    34,
    { anyLength: true },
  ],
  // Body: T…/B…/ then the secret; the minimum keeps 16 characters of the secret.
  [
    'Slack webhook',
    'slack_webhook',
    'https://hooks.slack.com/services/',
    `T${fake(UPPER + DIGITS, 10)}/B${fake(UPPER + DIGITS, 10)}/${fake(ALNUM, 24)}`,
    ALNUM,
    40,
    { anyLength: true },
  ],
  ['Stripe live secret key', 'stripe_key', 'sk_live_', fake(ALNUM, 99), ALNUM, 24],
  ['Stripe test secret key', 'stripe_key', 'sk_test_', fake(ALNUM, 99), ALNUM, 24],
  ['Stripe restricted key', 'stripe_key', 'rk_live_', fake(ALNUM, 99), ALNUM, 24],
  ['Stripe webhook secret', 'stripe_webhook_secret', 'whsec_', fake(ALNUM, 32), ALNUM, 22],
  ['OpenAI legacy key', 'openai_api_key', 'sk-', fake(ALNUM, 48), ALNUM, 32],
  ['OpenAI project key', 'openai_api_key', 'sk-proj-', fake(B64URL, 156), B64URL, 40],
  ['OpenAI service-account key', 'openai_api_key', 'sk-svcacct-', fake(B64URL, 156), B64URL, 40],
  ['Anthropic API key', 'anthropic_api_key', 'sk-ant-api03-', `${fake(B64URL, 93)}AA`, B64URL, 32],
  ['Anthropic admin key', 'anthropic_api_key', 'sk-ant-admin01-', `${fake(B64URL, 93)}AA`, B64URL, 32],
  ['Google API key', 'google_api_key', 'AIza', fake(B64URL, 35), B64URL, 24],
  ['Google OAuth client secret', 'google_oauth_client_secret', 'GOCSPX-', fake(B64URL, 28), B64URL, 19],
  ['Google OAuth access token', 'google_oauth_token', 'ya29.', fake(B64URL, 150), B64URL, 20],
  ['Twilio API key', 'twilio_api_key', 'SK', fake(HEX, 32), HEX, 22],
  ['Twilio account SID', 'twilio_account_sid', 'AC', fake(HEX, 32), HEX, 22],
  // Body: 22 characters, a dot, 43 characters; the minimum keeps 29 after the dot.
  ['SendGrid API key', 'sendgrid_api_key', 'SG.', `${fake(ALNUM, 22)}.${fake(ALNUM, 43)}`, ALNUM, 52, { anyLength: true }],
  ['npm token', 'npm_token', 'npm_', fake(ALNUM, 36), ALNUM, 24],
  ['PyPI token', 'pypi_token', 'pypi-AgEIcHlwaS5vcmc', fake(B64URL, 70), B64URL, 50],
  ['Hugging Face token', 'huggingface_token', 'hf_', fake(UPPER + LOWER, 34), UPPER + LOWER, 23],
  ['Shopify token', 'shopify_token', 'shpat_', fake(HEX, 32), HEX, 22],
  ['Grafana cloud token', 'grafana_token', 'glc_', fake(B64, 100), B64, 32],
  ['Grafana service-account token', 'grafana_token', 'glsa_', `${fake(ALNUM, 32)}_${fake(HEX, 8)}`, HEX, 28],
  ['1Password service-account token', 'onepassword_token', 'ops_', onePasswordBody(), B64, 100, { padding: '==' }],
  ['Groq API key', 'groq_api_key', 'gsk_', fake(ALNUM, 52), ALNUM, 35],
  ['Linear API key', 'linear_api_key', 'lin_api_', fake(ALNUM, 40), ALNUM, 27],
  ['Notion token', 'notion_token', 'ntn_', `${fake(DIGITS, 11)}${fake(ALNUM, 35)}`, ALNUM, 31],
  ['HashiCorp Vault service token', 'vault_token', 'hvs.', fake(B64URL, 95), B64URL, 64],
  ['HashiCorp Vault batch token', 'vault_token', 'hvb.', fake(B64URL, 138), B64URL, 92],
  ['Vercel token', 'vercel_token', 'vcp_', fake(ALNUM, 24), ALNUM, 16],
  ['Databricks token', 'databricks_token', 'dapi', fake(HEX, 32), HEX, 22],
  ['Docker personal access token', 'docker_token', 'dckr_pat_', fake(B64URL, 27), B64URL, 18],
  ['Figma token', 'figma_token', 'figd_', fake(B64URL, 40), B64URL, 27],
  ['Cloudflare user token', 'cloudflare_token', 'cfut_', `${fake(ALNUM, 40)}${fake(HEX, 8)}`, ALNUM, 32],
  ['Tailscale auth key', 'tailscale_key', 'tskey-auth-', `${fake(ALNUM, 12)}-${fake(ALNUM, 30)}`, ALNUM, 25],
  ['Mailgun key', 'mailgun_api_key', 'key-', fake(HEX, 32), HEX, 22],
  ['Discord webhook', 'discord_webhook', `https://discord.com/api/webhooks/${fake(DIGITS, 18)}/`, fake(B64URL, 68), B64URL, 30],
  ['Azure storage key', 'azure_storage_key', 'AccountKey=', fake(B64, 86), B64, 58, { padding: '==', keepsPrefix: true }],
];

export const PREFIXED_FORMATS: readonly (PrefixedFormat & { readonly extra: string })[] = ROWS.map(
  ([name, kind, prefix, body, alphabet, min, options]) => ({
    name,
    kind,
    prefix,
    body,
    alphabet,
    min,
    ...options,
    extra: fake(alphabet, MAX_EXTRA),
  }),
);

/** The token with a body of `length` characters: the standard body cut or lengthened. */
export function tokenOfLength(format: (typeof PREFIXED_FORMATS)[number], length: number): string {
  const body =
    length <= format.body.length ? format.body.slice(0, length) : format.body + format.extra.slice(0, length - format.body.length);
  return `${format.prefix}${body}${format.padding ?? ''}`;
}

/** What the masked token reads as. */
export function maskedToken(format: PrefixedFormat): string {
  return `${format.keepsPrefix ? format.prefix : ''}[REDACTED:${format.kind}]`;
}
