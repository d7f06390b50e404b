import { ALNUM, B64, B64URL, DIGITS, fakeSecrets, HEX, LOWER, UPPER } from './fake-secrets.js';

/**
 * The masking corpus: secrets in the contexts they are pasted in (each must be masked) and ordinary
 * prose and code (each must be left exactly as it is). mask-secrets.test.ts asserts both; the
 * differential test holds secretlint's preset to them too.
 */
// Seeded fake secrets (./fake-secrets.ts); this corpus was made from the generator's low bits and keeps them.
export const fake = fakeSecrets(20240611, 'low');
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const pemBody = (magic: string, length: number): string => (magic + fake(B64, length)).replace(/(.{64})/g, '$1\n');
export const pem = (label: string, magic: string): string => `-----BEGIN ${label}-----\n${pemBody(magic, 600)}\n-----END ${label}-----`;
const b64url = (s: string): string => Buffer.from(s).toString('base64url');
export const jwt = (): string =>
  `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url('{"sub":"user-1234","iat":1718000000}')}.${fake(B64URL, 43)}`;
// 1Password service-account tokens are base64 JSON; 3n+1 bytes end in "fQ==".
const opsToken = (): string => {
  let json = `{"email":"${fake(LOWER, 12)}@1passwordserviceaccounts.lcl","secretKey":"${fake(UPPER + DIGITS, 30)}","srpX":"${fake(HEX, 64)}"`;
  while ((json.length + 1) % 3 !== 1) json += ' ';
  return `ops_${b64(`${json}}`)}`;
};

export interface Case {
  readonly name: string;
  readonly secret: string;
  readonly text?: (secret: string) => string;
}

export const SECRETS: readonly Case[] = [
  { name: 'AWS access key id', secret: `AKIA${fake(UPPER + DIGITS, 16)}` },
  { name: 'AWS temporary access key id', secret: `ASIA${fake(UPPER + DIGITS, 16)}` },
  {
    name: 'AWS secret access key',
    secret: fake(B64, 40),
    text: (s) => `Here is my config: aws_secret_access_key = ${s} can you see why it fails?`,
  },
  { name: 'Intake API key', secret: `ik_${fake(B64URL, 43)}` },
  { name: 'Intake ingest secret', secret: `iak_${fake(B64URL, 43)}` },
  { name: 'GitHub classic token', secret: `ghp_${fake(ALNUM, 36)}` },
  { name: 'GitHub OAuth token', secret: `gho_${fake(ALNUM, 36)}` },
  { name: 'GitHub server token', secret: `ghs_${fake(ALNUM, 36)}` },
  { name: 'GitHub fine-grained token', secret: `github_pat_${fake(ALNUM, 22)}_${fake(ALNUM, 59)}` },
  { name: 'GitLab personal token', secret: `glpat-${fake(ALNUM, 20)}` },
  { name: 'GitLab runner token', secret: `glrt-${fake(ALNUM, 24)}` },
  { name: 'Slack bot token', secret: `xoxb-${fake(DIGITS, 12)}-${fake(DIGITS, 13)}-${fake(ALNUM, 24)}` },
  { name: 'Slack user token', secret: `xoxp-${fake(DIGITS, 12)}-${fake(DIGITS, 12)}-${fake(DIGITS, 13)}-${fake(HEX, 32)}` },
  {
    name: 'Slack webhook',
    secret: `https://hooks.slack.com/services/T${fake(UPPER + DIGITS, 10)}/B${fake(UPPER + DIGITS, 10)}/${fake(ALNUM, 24)}`,
  },
  { name: 'Stripe live secret key', secret: `sk_live_${fake(ALNUM, 99)}` },
  { name: 'Stripe restricted key', secret: `rk_live_${fake(ALNUM, 32)}` },
  { name: 'Stripe webhook secret', secret: `whsec_${fake(ALNUM, 32)}` },
  { name: 'OpenAI project key', secret: `sk-proj-${fake(B64URL, 74)}T3BlbkFJ${fake(B64URL, 74)}` },
  { name: 'OpenAI legacy key', secret: `sk-${fake(ALNUM, 20)}T3BlbkFJ${fake(ALNUM, 20)}` },
  { name: 'OpenAI key without marker', secret: `sk-proj-${fake(B64URL, 120)}` },
  { name: 'Anthropic API key', secret: `sk-ant-api03-${fake(B64URL, 93)}AA` },
  { name: 'Anthropic admin key', secret: `sk-ant-admin01-${fake(B64URL, 93)}AA` },
  { name: 'Google API key', secret: `AIza${fake(B64URL, 35)}` },
  { name: 'Google OAuth client secret', secret: `GOCSPX-${fake(B64URL, 28)}` },
  {
    name: 'GCP service-account JSON',
    secret: pemBody('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 900).replace(/\n/g, '\\n'),
    text: (s) =>
      `{"type": "service_account", "project_id": "demo", "private_key_id": "${fake(HEX, 40)}", "private_key": "-----BEGIN PRIVATE KEY-----\\n${s}\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@demo.iam.gserviceaccount.com"}`,
  },
  { name: 'Twilio API key', secret: `SK${fake(HEX, 32)}` },
  { name: 'Twilio account SID', secret: `AC${fake(HEX, 32)}` },
  { name: 'SendGrid API key', secret: `SG.${fake(B64URL.replace('-', ''), 22)}.${fake(ALNUM, 43)}` },
  { name: 'npm token', secret: `npm_${fake(ALNUM, 36)}` },
  { name: 'JWT', secret: jwt() },
  { name: 'Bearer header', secret: fake(ALNUM, 40), text: (s) => `curl -H "Authorization: Bearer ${s}" https://api.example.com/v1/me` },
  {
    name: 'Basic authorization header',
    secret: b64(`admin:${fake(ALNUM, 12)}`),
    text: (s) => `The request had Authorization: Basic ${s} and returned 401.`,
  },
  { name: 'PEM RSA private key', secret: pem('RSA PRIVATE KEY', 'MIIEowIBAAKCAQEA') },
  { name: 'PEM EC private key', secret: pem('EC PRIVATE KEY', 'MHcCAQEEI') },
  { name: 'PEM OpenSSH private key', secret: pem('OPENSSH PRIVATE KEY', 'b3BlbnNzaC1rZXktdjEAAAAA') },
  { name: 'PEM encrypted private key', secret: pem('ENCRYPTED PRIVATE KEY', 'MIIFHDBOBgkqhkiG9w0BBQ0w') },
  {
    name: 'PGP private key block',
    secret: `-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n${pemBody('lQOYBF', 500)}\n-----END PGP PRIVATE KEY BLOCK-----`,
  },
  { name: 'truncated private key', secret: `-----BEGIN PRIVATE KEY-----\n${pemBody('MIIEvg', 300)}` },
  {
    name: 'basic-auth URL',
    secret: `deploy:${fake(ALNUM, 14)}`,
    text: (s) => `Clone it with https://${s}@git.example.com/team/repo.git please`,
  },
  { name: 'PostgreSQL connection string', secret: `postgres://app_rw:${fake(ALNUM, 16)}@db.internal.example.net:5432/orders` },
  { name: 'MongoDB connection string', secret: `mongodb+srv://svc:${fake(ALNUM, 16)}@cluster0.abcde.mongodb.net/app` },
  { name: 'Redis URL password', secret: fake(ALNUM, 20), text: (s) => `REDIS_URL is redis://:${s}@cache.example.net:6379/0 in prod` },
  { name: 'HashiCorp Vault token', secret: `hvs.${fake(B64URL, 95)}` },
  { name: 'Hugging Face token', secret: `hf_${fake(UPPER + LOWER, 34)}` },
  { name: 'Shopify token', secret: `shpat_${fake(HEX, 32)}` },
  { name: 'Databricks token', secret: `dapi${fake(HEX, 32)}` },
  { name: 'Grafana service-account token', secret: `glsa_${fake(ALNUM, 32)}_${fake(HEX, 8)}` },
  { name: 'Linear API key', secret: `lin_api_${fake(ALNUM, 40)}` },
  { name: 'Notion token', secret: `ntn_${fake(DIGITS, 11)}${fake(ALNUM, 35)}` },
  { name: '1Password service-account token', secret: opsToken() },
  { name: 'Groq API key', secret: `gsk_${fake(ALNUM, 52)}` },
  { name: 'Docker personal access token', secret: `dckr_pat_${fake(B64URL, 27)}` },
  { name: 'Figma token', secret: `figd_${fake(B64URL, 40)}` },
  { name: 'Vercel token', secret: `vcp_${fake(ALNUM, 24)}` },
  { name: 'Cloudflare user token', secret: `cfut_${fake(ALNUM, 40)}${fake(HEX, 8)}` },
  { name: 'Tailscale auth key', secret: `tskey-auth-${fake(ALNUM, 12)}-${fake(ALNUM, 30)}` },
  { name: 'Discord webhook', secret: `https://discord.com/api/webhooks/${fake(DIGITS, 18)}/${fake(B64URL, 68)}` },
  { name: 'Mailgun key', secret: `key-${fake(HEX, 32)}` },
  { name: 'PyPI token', secret: `pypi-AgEIcHlwaS5vcmc${fake(B64URL, 70)}` },
  {
    name: 'Azure storage key',
    secret: `${fake(B64, 86)}==`,
    text: (s) => `DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=${s};EndpointSuffix=core.windows.net`,
  },
  {
    name: 'password assignment',
    secret: `Tr0ub4dor&${fake(ALNUM, 6)}`,
    text: (s) => `I set password="${s}" in the .env and login still fails`,
  },
  { name: 'env-file secret', secret: `${fake(ALNUM, 20)}42`, text: (s) => `DB_PASSWORD=${s}\nDB_HOST=localhost` },
  { name: 'JSON api_key', secret: fake(ALNUM, 32), text: (s) => `payload: {"api_key": "${s}", "region": "eu"}` },
  { name: 'env-style letters-only password', secret: fake(LOWER, 14), text: (s) => `PASSWORD=${s}` },
  { name: 'XML password element', secret: fake(ALNUM, 16), text: (s) => `<datasource><password>${s}</password></datasource>` },
  { name: 'long base64 blob', secret: fake(B64, 400) },
  { name: 'data: URI', secret: fake(B64, 300), text: (s) => `Here is the screenshot data:image/png;base64,${s}= thanks` },
  { name: 'long hex payload', secret: fake(HEX, 256) },
  {
    name: 'URL password holding an @',
    secret: `${fake(ALNUM, 7)}@${fake(ALNUM, 7)}`,
    text: (s) => `MONGO_URL="mongodb+srv://appuser:${s}@cluster0.example.net/app?retryWrites=true";`,
  },
];

export const ORDINARY: readonly string[] = [
  'Hi! Can you help me reset my password? The password reset email never arrived.',
  'As a token of our appreciation, here is a discount code for your next order.',
  'Request 3f2b8c1e-9d4a-4b7e-8a6f-2c1d0e9f8a7b failed with status 500 at 2024-06-11T10:00:00Z.',
  'Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8, see also a1b2c3d.',
  'The docs are at https://docs.example.com/guide/getting-started?tab=api#install and http://localhost:8080/health',
  'SELECT id, email, created_at FROM users WHERE org_id = $1 AND deleted_at IS NULL ORDER BY id LIMIT 50;',
  'export function add(a: number, b: number): number {\n  return a + b;\n}',
  'interface Login { username: string; password: string; token?: string }',
  'const secret = crypto.randomBytes(32).toString("hex");\nconst token = await getToken();',
  'config.password = process.env.DB_PASSWORD;\napi_key = os.getenv("API_KEY")',
  '{"name": "Ada", "age": 36, "tags": ["admin", "beta"], "active": true}',
  '# Release notes\n\n- **Faster** sync\n- Fixed `null` handling in the `Settings` page\n\n> Thanks to everyone!',
  'The word test in base64 is dGVzdA== and hello is aGVsbG8=.',
  'Please email support@example.com or jane.doe+billing@acme.co.uk for help.',
  'Order #12345 totals 1,234.56 EUR; call +44 20 7946 0958 before 17:30.',
  'The model used 1532 input tokens and max_tokens: 4096 was set; token_type: bearer.',
  'Set password: <your-password> and token=${API_TOKEN} in the template, then PASSWORD=changeme for local dev.',
  'Bearer bonds were popular in the 19th century; the bearer of bad news was late.',
  'npm install --save-dev typescript@5.9.3 && git checkout -b feature/login-page',
  'The secret to good bread is time. Password strength: at least 12 characters.',
  'Our API key rotation policy: keys expire after 90 days; Authorization: required for all endpoints.',
  'postgres://user:password@localhost:5432/mydb is the example connection string in the README.',
  'Line of dashes:\n' + '-'.repeat(240) + '\n' + '='.repeat(240),
  'ssh-ed25519 public keys start with ssh-ed25519 and a public key is fine to share.',
  'Version 1.2.3-beta.4, build 20240611.1, checksum sha256:' + 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
];

/** How a case reads in a message. */
export function caseText({ secret, text }: Case): string {
  return text ? text(secret) : `Hey, my key is ${secret} - is that why the deploy fails?`;
}
