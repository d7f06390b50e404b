import { z } from 'zod';
import { deriveKey } from './auth/secrets.js';
import { parsePayloadKeys, type PayloadKey } from './temporal/codec.js';
import type { ExtractorConfig } from './providers/signal-extractor/index.js';
import type { TranscriberConfig } from './providers/transcriber/index.js';
import type { RecorderConfig } from './providers/recorder/index.js';
import type { FfmpegSettings } from './media/ffmpeg-tools.js';

/**
 * The environment, read once into a typed, validated object. Nothing else in the
 * code base reads `process.env`: everything takes a `Config` (or a part of it).
 * Every variable is documented in docs/configuration.md.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: port.default(8080),
  API_PROCESSES: positiveInt.max(64).default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.url().optional(),
  DATA_DIR: z.string().min(1).default('.data'),

  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL').optional(),
  DATABASE_POOL_SIZE: positiveInt.max(200).default(10),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(30_000),
  DEV_POSTGRES_PORT: port.default(54329),
  DEV_POSTGRES_SHARED_DIR: z.string().min(1).default('/var/lib/intake'),
  TOOLS_DIR: z.string().min(1).default('.tools'),

  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('intake'),
  TEMPORAL_MEDIA_TASK_QUEUE: z.string().min(1).optional(),
  MEDIA_WORKER_ACTIVITY_SLOTS: positiveInt.max(64).default(2),
  METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  METRICS_PORT: z.union([z.literal('off'), port]).default(9464),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_PAYLOAD_KEYS: z.string().min(1).optional(),
  CODEC_SERVER_HOST: z.string().min(1).default('127.0.0.1'),
  CODEC_SERVER_PORT: port.default(8888),
  CODEC_SERVER_CORS_ORIGINS: z.string().default('http://localhost:8233,http://127.0.0.1:8233'),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  WORKER_SHUTDOWN_GRACE_SECONDS: positiveInt.default(30),

  SIGNING_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  TOKEN_ISSUER: z.string().min(1).default('intake'),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt.max(31 * 24 * 3600).default(3600),
  OPERATOR_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  TRUST_PROXY: bool.default(false),

  BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  BODY_WORKER_THRESHOLD_BYTES: positiveInt.default(256 * 1024),
  BODY_WORKER_THREADS: z.coerce.number().int().min(0).max(64).default(1),
  FEEDBACK_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(100),
  AGENT_INGEST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60_000),
  RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),

  AGENT_SESSION_IDLE_SECONDS: positiveInt.max(30 * 24 * 3600).default(3600),
  AGENT_SESSION_ACTIVITY_TIMEOUT_SECONDS: positiveInt.max(3600).default(30),
  AGENT_SESSION_HISTORY_LIMIT: positiveInt.min(100).max(40_000).default(4000),
  AGENT_BILLING_RECHECK_SECONDS: positiveInt.max(24 * 3600).default(60),
  AGENT_ANALYSIS_CREDIT_COST: positiveInt.max(1_000_000).default(1),
  AGENT_RETENTION_SWEEP_MINUTES: positiveInt.max(7 * 24 * 60).default(60),
  AGENT_WAKE_RECONCILE_SECONDS: positiveInt.max(3600).default(15),
  AGENT_CREDENTIAL_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(2),
  AGENT_DRAIN_CONCURRENCY: positiveInt.max(64).default(4),
  AGENT_DRAIN_BATCH_SESSIONS: positiveInt.max(1000).default(50),
  AGENT_DRAIN_POLL_MS: positiveInt.min(10).max(10_000).default(50),
  AGENT_WORKFLOW_SIGNAL_SECONDS: z.coerce.number().int().min(0).max(24 * 3600).default(60),

  SIGNAL_EXTRACTOR: z.enum(['local', 'openai']).default('local'),
  SIGNAL_EXTRACTOR_BASE_URL: z.url().optional(),
  SIGNAL_EXTRACTOR_API_KEY: z.string().min(1).optional(),
  SIGNAL_EXTRACTOR_MODEL: z.string().min(1).default('gpt-4o-mini'),
  SIGNAL_EXTRACTOR_TIMEOUT_MS: positiveInt.max(600_000).default(20_000),

  TRANSCRIBER: z.enum(['none', 'openai', 'pocketsphinx']).default('none'),
  TRANSCRIBER_BASE_URL: z.string().url().optional(),
  TRANSCRIBER_API_KEY: z.string().min(1).optional(),
  TRANSCRIBER_MODEL: z.string().min(1).default('whisper-1'),
  TRANSCRIBER_TIMEOUT_MS: positiveInt.max(3_600_000).default(600_000),

  RECORDER: z.enum(['local', 'recall']).default('local'),
  RECORDER_BOT_NAME: z.string().min(1).max(100).default('Intake Recorder'),
  LOCAL_RECORDER_MEETING_SECONDS: positiveInt.max(3600).default(10),
  RECALL_BASE_URL: z.string().url().optional(),
  RECALL_API_KEY: z.string().min(1).optional(),
  RECALL_TIMEOUT_MS: positiveInt.max(120_000).default(20_000),
  MEETING_STATUS_POLL_SECONDS: positiveInt.max(600).default(5),
  MEETING_MAX_HOURS: positiveInt.max(48).default(6),

  RECORDING_BODY_LIMIT_BYTES: positiveInt.default(16 * 1024 * 1024),
  STORAGE_DIR: z.string().min(1).optional(),
  PLAYBACK_URL_TTL_SECONDS: positiveInt.min(60).max(7 * 24 * 3600).default(3600),
  MEDIA_TRANSFER_RETRY_INITIAL_SECONDS: positiveInt.max(3600).default(10),
  MEDIA_HEARTBEAT_TIMEOUT_SECONDS: positiveInt.min(2).max(3600).default(120),
  UPLOAD_TIMEOUT_SECONDS: positiveInt.max(7 * 24 * 3600).default(3600),
  MEDIA_RECONCILE_SECONDS: positiveInt.max(3600).default(60),
  // Default: the spec's largest fileSize (2^53 - 1); operators set their own.
  UPLOAD_MAX_BYTES: positiveInt.max(Number.MAX_SAFE_INTEGER).default(Number.MAX_SAFE_INTEGER),
  UPLOAD_STORE: z.enum(['file', 's3']).default('file'),
  MEDIA_STORE: z.enum(['file', 's3']).default('file'),
  MEDIA_FETCH_ALLOWED_HOSTS: z.string().optional(),
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),
  FFMPEG_MEMORY_LIMIT_MB: positiveInt.min(256).max(1_048_576).default(4096),
  FFMPEG_TIME_LIMIT_SECONDS: positiveInt.min(60).max(7 * 24 * 3600).default(6 * 3600),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_FORCE_PATH_STYLE: bool.default(false),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_PART_SIZE_BYTES: positiveInt.min(5 * 1024 * 1024).default(8 * 1024 * 1024),

  MCP_BODY_LIMIT_BYTES: positiveInt.default(16 * 1024 * 1024),
  MCP_AUTHORIZATION_SERVERS: z.string().min(1).optional(),
  MCP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(300),
});

export type Env = z.input<typeof schema>;
/** Every variable the service reads (docs/configuration.md documents each one; a unit test checks it). */
export const ENV_VARIABLES = Object.keys(schema.shape);
type Parsed = z.output<typeof schema>;

export interface Config {
  env: Parsed['NODE_ENV'];
  http: {
    host: string; port: number; publicBaseUrl: string | undefined; trustProxy: boolean; bodyLimitBytes: number; processes: number;
    /** Bodies longer than this are parsed and validated by `bodyWorkerThreads` threads (0: none). */
    bodyWorkerThresholdBytes: number; bodyWorkerThreads: number;
  };
  /** The operator credential for operator routes (credit top-ups); unset: those routes refuse everyone. */
  operatorToken: string | undefined;
  /** `npm run codec-server` (the Temporal UI's payload codec). */
  codecServer: { host: string; port: number; allowedOrigins: string[] };
  logLevel: Parsed['LOG_LEVEL'];
  dataDir: string;
  database: { url: string | undefined; poolSize: number; statementTimeoutMs: number; devPort: number; devSharedDir: string };
  /** Where the dev stack and the tests find and install tools (the Temporal CLI). */
  toolsDir: string;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    /** Heavy media activities (default `<taskQueue>-media`). */
    mediaTaskQueue: string;
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
  /** Requests a minute; 0 turns a limit off. Feedback per key; agent ingest and recording creates per organization. */
  rateLimits: { feedbackPerMinute: number; agentIngestPerMinute: number; recordingCreatesPerMinute: number };
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
    drainBatchSessions: number;
    drainPollMs: number;
    /** The drainer tells a session's workflow at most this often while nothing needs it (0: every pass). */
    workflowSignalSeconds: number;
  };
  /** The process's operational endpoint: /metrics, and /healthz on the worker (`port` null: none). */
  metrics: { host: string; port: number | null };
  signalExtractor: ExtractorConfig;
  /** Automatic transcription of recordings without a supplied transcript; `none`: status `unavailable`. */
  transcriber: TranscriberConfig;
  /** The meeting recorder: the built-in local one, or a Recall.ai-style bot API. */
  meetings: { recorder: RecorderConfig; botName: string; pollSeconds: number; maxHours: number };
  recordings: { bodyLimitBytes: number };
  /** `dir`: where media (uploads, renditions) is kept; default `<DATA_DIR>/media`. */
  media: {
    dir: string; playbackTtlSeconds: number; transferRetryInitialSeconds: number; heartbeatTimeoutSeconds: number; uploadTimeoutSeconds: number; reconcileSeconds: number;
    /** The largest direct upload accepted (its declared fileSize). */
    uploadMaxBytes: number;
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
  mcp: { bodyLimitBytes: number; authorizationServers: string[] | undefined; ratePerMinute: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the given environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
  }
  const e = result.data;
  if (e.AGENT_WORKFLOW_SIGNAL_SECONDS >= e.AGENT_SESSION_IDLE_SECONDS) {
    // An active session's workflow would be closed as idle between two signals.
    throw new ConfigError('Invalid configuration: AGENT_WORKFLOW_SIGNAL_SECONDS: must be less than AGENT_SESSION_IDLE_SECONDS');
  }
  return {
    env: e.NODE_ENV,
    http: { host: e.HOST, port: e.PORT, publicBaseUrl: e.PUBLIC_BASE_URL, trustProxy: e.TRUST_PROXY, bodyLimitBytes: e.BODY_LIMIT_BYTES, processes: e.API_PROCESSES,
      bodyWorkerThresholdBytes: e.BODY_WORKER_THRESHOLD_BYTES, bodyWorkerThreads: e.BODY_WORKER_THREADS,
    },
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    database: { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS, devPort: e.DEV_POSTGRES_PORT, devSharedDir: e.DEV_POSTGRES_SHARED_DIR },
    toolsDir: e.TOOLS_DIR,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      mediaTaskQueue: e.TEMPORAL_MEDIA_TASK_QUEUE ?? `${e.TEMPORAL_TASK_QUEUE}-media`,
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
    operatorToken: e.OPERATOR_TOKEN,
    codecServer: {
      host: e.CODEC_SERVER_HOST,
      port: e.CODEC_SERVER_PORT,
      allowedOrigins: e.CODEC_SERVER_CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    },
    auth: { signingSecret: e.SIGNING_SECRET, issuer: e.TOKEN_ISSUER, accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS },
    rateLimits: {
      feedbackPerMinute: e.FEEDBACK_RATE_LIMIT_PER_MINUTE,
      agentIngestPerMinute: e.AGENT_INGEST_RATE_LIMIT_PER_MINUTE,
      recordingCreatesPerMinute: e.RECORDING_CREATE_RATE_LIMIT_PER_MINUTE,
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
      drainBatchSessions: e.AGENT_DRAIN_BATCH_SESSIONS,
      drainPollMs: e.AGENT_DRAIN_POLL_MS,
      workflowSignalSeconds: e.AGENT_WORKFLOW_SIGNAL_SECONDS,
    },
    signalExtractor: e.SIGNAL_EXTRACTOR === 'openai'
      ? {
        kind: 'openai',
        baseUrl: required(e.SIGNAL_EXTRACTOR_BASE_URL, 'SIGNAL_EXTRACTOR_BASE_URL (with SIGNAL_EXTRACTOR=openai)'),
        apiKey: e.SIGNAL_EXTRACTOR_API_KEY,
        model: e.SIGNAL_EXTRACTOR_MODEL,
        timeoutMs: e.SIGNAL_EXTRACTOR_TIMEOUT_MS,
      }
      : { kind: 'local' },
    transcriber: e.TRANSCRIBER === 'openai'
      ? {
        kind: 'openai',
        baseUrl: required(e.TRANSCRIBER_BASE_URL, 'TRANSCRIBER_BASE_URL (with TRANSCRIBER=openai)'),
        apiKey: e.TRANSCRIBER_API_KEY,
        model: e.TRANSCRIBER_MODEL,
        timeoutMs: e.TRANSCRIBER_TIMEOUT_MS,
      }
      : e.TRANSCRIBER === 'pocketsphinx' ? { kind: 'pocketsphinx' } : { kind: 'none' },
    meetings: {
      recorder: e.RECORDER === 'recall'
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
      uploadStore: e.UPLOAD_STORE === 's3' ? { kind: 's3', ...s3Settings(e, 'UPLOAD_STORE') } : { kind: 'file' },
      mediaStore: e.MEDIA_STORE === 's3' ? { kind: 's3', ...s3Settings(e, 'MEDIA_STORE') } : { kind: 'file' },
      fetchAllowedHosts: (e.MEDIA_FETCH_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
      ffmpeg: {
        ffmpegPath: e.FFMPEG_PATH, ffprobePath: e.FFPROBE_PATH, toolsDir: e.TOOLS_DIR,
        memoryLimitMb: e.FFMPEG_MEMORY_LIMIT_MB, timeLimitSeconds: e.FFMPEG_TIME_LIMIT_SECONDS,
      },
    },
    mcp: {
      bodyLimitBytes: e.MCP_BODY_LIMIT_BYTES,
      ratePerMinute: e.MCP_RATE_LIMIT_PER_MINUTE,
      authorizationServers: e.MCP_AUTHORIZATION_SERVERS?.split(',').map((s) => s.trim()).filter(Boolean),
    },
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

/** An S3-compatible bucket (AWS, MinIO, R2, …); without keys, the AWS SDK's default credential chain. */
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
