import { drainerSettings } from '../src/agents/drainer.js';
import { randomUUID } from 'node:crypto';
import type { ActivityDeps } from '../activities/index.js';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createApplication, issueCredential, changeApplication, type SettingsPatch } from '../src/agents/applications.js';
import { createDatabasePool } from '../src/db/pool.js';
import type { AgentEvent, AgentIngestRequest } from '../src/domain/agent-ingest.js';
import { findCredentialByHash, type ApplicationRow, type CredentialLookup } from '../src/db/repositories/agent-applications.js';
import { hashSecret } from '../src/auth/secrets.js';
import { startTestApi, type TestApi } from './app.js';
import { testConfig } from './config.js';
import { createTestOrg, type TestOrg } from './fixtures.js';
import { createTestDatabase } from './stack.js';
import { waitFor } from './wait.js';
import { startTestWorker, type TestWorker } from './worker.js';

let counter = 0;

export interface TestAgentApp {
  app: ApplicationRow;
  agentKey: string;
  secret: string;
  credentialId: string;
  /** The secret's lookup as the ingest's authentication makes it (for AgentIngestWriter). */
  authority: CredentialLookup;
}

export interface AgentContext {
  databaseUrl: string;
  pool: DatabasePool;
  api: TestApi;
  org: TestOrg;
  /** A fresh application of `org` with one secret (settings applied when given). */
  newApp(settings?: SettingsPatch, org?: TestOrg): Promise<TestAgentApp>;
  /** POST ingest with the app's secret (or the given headers). */
  ingest(app: TestAgentApp | null, body: unknown, headers?: Record<string, string>): ReturnType<TestApi['request']>;
  close(): Promise<void>;
}

/** An application of `owner` with one ingest secret (settings applied when given). */
export async function createTestAgentApp(
  pool: DatabasePool,
  owner: TestOrg,
  agentKey: string,
  o: { name?: string; settings?: SettingsPatch } = {},
): Promise<TestAgentApp> {
  let app = await createApplication(pool, { organizationId: owner.organizationId, name: o.name ?? agentKey, agentKey });
  if (o.settings) app = await changeApplication(pool, owner.organizationId, app.id, o.settings);
  const { row, secret } = await issueCredential(pool, app);
  const authority = (await findCredentialByHash(pool, hashSecret(secret)))!;
  return { app, agentKey, secret, credentialId: row.id, authority };
}

export async function agentContext(options: { env?: Record<string, string>; credits?: number } = {}): Promise<AgentContext> {
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const api = await startTestApi({ pool, config: testConfig(options.env ?? {}) });
  const org = await createTestOrg(pool, { credits: options.credits ?? 1000 });
  return {
    databaseUrl,
    pool,
    api,
    org,
    async newApp(settings, owner = org) {
      const agentKey = `agent-${++counter}`;
      return createTestAgentApp(pool, owner, agentKey, { name: `App ${counter}`, settings });
    },
    ingest(app, body, headers = {}) {
      const auth = app ? { 'X-Service-Agent-Key': app.secret } : {};
      return api.request('/v3/rest/agent-conversations/ingest', { method: 'POST', headers: { ...auth, ...headers }, json: body });
    },
    async close() {
      await api.close();
      await pool.end();
    },
  };
}

const T0 = Date.parse('2026-11-01T10:00:00Z');

export function userMessage(sequence: number, content: string, extra: Partial<AgentEvent> = {}): AgentEvent {
  return {
    externalEventId: `e${sequence}`,
    sequence,
    revision: 1,
    occurredAt: new Date(T0 + sequence * 1000).toISOString(),
    type: 'user_message',
    content,
    ...extra,
  };
}

export function assistantMessage(sequence: number, content: string, extra: Partial<AgentEvent> = {}): AgentEvent {
  return { ...userMessage(sequence, content), type: 'assistant_message', final: true, ...extra };
}

export function feedbackEvent(
  sequence: number,
  target: string,
  rating: 'positive' | 'negative' = 'positive',
  extra: Partial<AgentEvent> = {},
): AgentEvent {
  return {
    ...userMessage(sequence, ''),
    content: undefined,
    type: 'feedback',
    feedback: { targetEventExternalId: target, rating },
    ...extra,
  };
}

/** A session request for `app` with the given events (other fields overridable). */
export function sessionRequest(app: TestAgentApp, events: AgentEvent[], extra: Partial<AgentIngestRequest> = {}): AgentIngestRequest {
  return { agentKey: app.agentKey, externalSessionId: 'session-1', status: 'open', participants: [], events, ...extra };
}

/** Rows of a table for the organization's sessions, to prove a refused request stored nothing. */
export async function countRows(
  pool: DatabasePool,
  table: 'agent_sessions' | 'agent_events' | 'agent_participants' | 'agent_event_revisions',
): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`);
}

export interface ProcessingContext extends AgentContext {
  worker: TestWorker;
  /** The stored session: watermark, status and processing status. */
  session(sessionId: string): Promise<{ processed_through_sequence: number | null; processing_status: string; status: string }>;
  /** Waits until the session's watermark reaches `sequence` (and its analyses ran); returns the session. */
  processedThrough(sessionId: string, sequence: number, timeoutMs?: number): ReturnType<ProcessingContext['session']>;
  /** Counts of what processing produced for a session. */
  outcome(sessionId: string): Promise<{ units: number; explicit: number; inferred: number; queued: number; done: number }>;
  close(): Promise<void>;
}

/** An agent context whose API starts session workflows on a real worker (short timeouts for tests). */
export async function processingContext(
  options: { env?: Record<string, string>; credits?: number; worker?: boolean; deps?: Partial<ActivityDeps> } = {},
): Promise<ProcessingContext & { taskQueue: string }> {
  const taskQueue = `test-${randomUUID()}`;
  const base = await agentContext({
    credits: options.credits,
    env: {
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGENT_SESSION_IDLE_SECONDS: '60',
      AGENT_BILLING_RECHECK_SECONDS: '1',
      AGENT_SESSION_ACTIVITY_TIMEOUT_SECONDS: '5',
      ...options.env,
    },
  });
  // Without an in-process worker the test brings its own (a killable process).
  const worker =
    options.worker === false
      ? { taskQueue, webhookTaskQueue: `${taskQueue}-webhooks`, stop: async () => undefined }
      : await startTestWorker(base.pool, {
          taskQueue,
          deps: {
            analysisCreditCost: base.api.deps.config.agents.analysisCreditCost,
            drainer: drainerSettings(base.api.deps.config),
            ...options.deps,
          },
        });
  const sessionRow = z.object({ processed_through_sequence: z.number().nullable(), processing_status: z.string(), status: z.string() });
  const session = (id: string) =>
    base.pool.one(sql.type(sessionRow)`
    SELECT processed_through_sequence, processing_status, status FROM agent_sessions WHERE id = ${id}`);
  const outcome = (id: string) =>
    base.pool.one(sql.type(
      z.object({ units: z.number(), explicit: z.number(), inferred: z.number(), queued: z.number(), done: z.number() }),
    )`
    SELECT (SELECT count(*)::int FROM usage_records WHERE session_id = ${id}) AS units,
      (SELECT count(*)::int FROM agent_signals WHERE session_id = ${id} AND source = 'explicit_feedback') AS explicit,
      (SELECT count(*)::int FROM agent_signals WHERE session_id = ${id} AND source = 'qualitative_inference') AS inferred,
      (SELECT count(*)::int FROM agent_analysis_jobs WHERE session_id = ${id} AND status = 'queued') AS queued,
      (SELECT count(*)::int FROM agent_analysis_jobs WHERE session_id = ${id} AND status = 'done') AS done`);
  return {
    ...base,
    taskQueue,
    worker,
    session,
    outcome,
    async processedThrough(id, sequence, timeoutMs = 30_000) {
      const done = async () => {
        const s = await session(id);
        return (s.processed_through_sequence ?? -1) >= sequence && (await outcome(id)).queued === 0;
      };
      if (!(await waitFor(done, timeoutMs, 100)))
        throw new Error(`session ${id} not processed through ${sequence}: ${JSON.stringify(await session(id))}`);
      return session(id);
    },
    async close() {
      await worker.stop();
      await base.close();
    },
  };
}
