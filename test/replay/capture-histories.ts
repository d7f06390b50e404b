/**
 * Captures the replay suite's histories: runs representative workflows against the harness's real
 * PostgreSQL and Temporal (the real API, the real worker), and writes each history to
 * test/replay/histories/<workflow>/<scenario>.json; an existing file is never overwritten (see
 * save-history.ts): capture a changed shape under a new name. Run after a deliberate workflow change
 * (behind `patched()`): `npx tsx test/replay/capture-histories.ts`. agent-session/v1.json (before
 * processing existed) is kept from its own time and not re-captured.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  agentSessionWorkflowId,
  diagnosticsWorkflowId,
  mediaIngestionWorkflowId,
  retentionSweepWorkflowId,
} from '../../src/temporal/ids.js';
import { diagnosticsWorkflow } from '../../workflows/diagnostics/workflow.js';
import { retentionSweepWorkflow } from '../../workflows/retention-sweep/workflow.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../harness/agents.js';
import { stopTestStack } from '../../harness/stack.js';
import { TEST_OPERATOR_TOKEN, TEST_SIGNING_SECRET } from '../../harness/config.js';
import { loopbackMediaDeps } from '../../harness/worker.js';
import { createTestUser } from '../../harness/fixtures.js';
import { LocalRecorder } from '../../src/providers/recorder/local.js';
import { meetingJoinIdFor } from '../../src/recordings/meeting-joins.js';
import { listenLocal } from '../../harness/http.js';
import { runFfmpeg } from '../../harness/media.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

async function send(ctx: ProcessingContext, app: TestAgentApp, id: string, events: ReturnType<typeof userMessage>[], status = 'open') {
  const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: id, status: status as 'open' }));
  if (res.status !== 202) throw new Error(`ingest failed: ${JSON.stringify(res.body)}`);
  return ctx.api.temporal.client.workflow.getHandle(agentSessionWorkflowId(res.body.sessionId as string));
}
const sessionOf = (h: WorkflowHandle) => h.workflowId.replace('agent-session/', '');

const ctx = await processingContext({ credits: 2 });
try {
  const client = ctx.api.temporal.client;
  const diagnostics = await client.workflow.start(diagnosticsWorkflow, {
    workflowId: diagnosticsWorkflowId('replay-capture'),
    taskQueue: ctx.taskQueue,
    args: [{ version: 1, requestedBy: 'capture' }],
  });
  await diagnostics.result();
  await saveHistory('diagnostics', 'v1', diagnostics);

  const app = await ctx.newApp();
  // Billing-blocked after two analyses (the organization has 2 credits), resumed by a top-up.
  let h = await send(
    ctx,
    app,
    'billing',
    [1, 3, 5, 7].flatMap((s) => [userMessage(s, `q${s}`), assistantMessage(s + 1, `a${s}`)]),
    'ended',
  );
  const blocked = async () => (await ctx.session(sessionOf(h))).processing_status === 'billing_blocked';
  while (!(await blocked())) await new Promise((r) => setTimeout(r, 100));
  await ctx.api.request(`/v3/operator/organizations/${ctx.org.organizationId}/credits`, {
    method: 'POST',
    headers: { 'X-Operator-Token': TEST_OPERATOR_TOKEN },
    json: { amount: 100 },
  });
  await h.result();
  await saveHistory('agent-session', 'billing', h);

  // Gap, then the end goes through it.
  h = await send(ctx, app, 'gap', [userMessage(1, 'q'), assistantMessage(2, 'a'), userMessage(4, 'after the gap')]);
  await ctx.processedThrough(sessionOf(h), 2);
  await send(ctx, app, 'gap', [assistantMessage(6, 'bye')], 'ended');
  await h.result();
  await saveHistory('agent-session', 'gap-end', h);

  // A partial response turned final, then revised (signals replaced), then the session ends.
  h = await send(ctx, app, 'revision', [userMessage(1, 'the export is broken'), assistantMessage(2, 'draft', { final: false })]);
  await ctx.processedThrough(sessionOf(h), 2);
  await send(ctx, app, 'revision', [assistantMessage(2, 'final', { revision: 2 })]);
  await ctx.processedThrough(sessionOf(h), 2);
  await send(ctx, app, 'revision', [assistantMessage(2, 'final, corrected', { revision: 3 }), feedbackEvent(3, 'e2')], 'ended');
  await h.result();
  await saveHistory('agent-session', 'revision', h);

  const sweep = await client.workflow.start(retentionSweepWorkflow, {
    workflowId: `${retentionSweepWorkflowId()}/replay-capture`,
    taskQueue: ctx.taskQueue,
    args: [{ version: 1 }],
  });
  await sweep.result();
  await saveHistory('retention-sweep', 'v1', sweep);
} finally {
  await ctx.close();
}

// Continue-as-new: a long session with a small history limit; the first run's history ends in it.
const long = await processingContext({ env: { AGENT_SESSION_HISTORY_LIMIT: '100' } });
try {
  const app = await long.newApp();
  let h: WorkflowHandle | undefined;
  for (let i = 0; i < 12; i++) {
    h = await send(long, app, 'long', [userMessage(2 * i + 1, `q${i}`), assistantMessage(2 * i + 2, `a${i}`)]);
    await long.processedThrough(sessionOf(h), 2 * i + 2);
  }
  const runs = [];
  for await (const w of long.api.temporal.client.workflow.list({
    query: `WorkflowId = '${h!.workflowId}' AND ExecutionStatus = 'ContinuedAsNew'`,
  }))
    runs.push(w);
  if (!runs.length) throw new Error('no run continued as new');
  await saveHistory('agent-session', 'continue-as-new', long.api.temporal.client.workflow.getHandle(h!.workflowId, runs.at(-1)!.runId));
} finally {
  await long.close();
}

// A media ingestion: a URL transfer from a local server, encoded and published.
const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-capture-media-'));
const wav = path.join(mediaDir, 'tone.wav');
await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=2', wav]);
const tone = await readFile(wav);
const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': tone.length }).end(tone));
await listenLocal(server);
const media = await processingContext({
  env: { STORAGE_DIR: mediaDir, MEETING_STATUS_POLL_SECONDS: '1' },
  deps: { ...loopbackMediaDeps(mediaDir), recorder: new LocalRecorder({ dir: path.join(mediaDir, 'recorder'), meetingSeconds: 2 }) },
});
try {
  const port = (server.address() as AddressInfo).port;
  const created = await media.api.request('/v3/rest/recordings', {
    method: 'POST',
    headers: { 'X-Service-Api-Key': media.org.apiKey },
    json: { record: { externalId: 'capture' }, assetUrl: `http://media.test:${port}/tone.wav` },
  });
  const recordingId = (created.body as { id: string }).id;
  // Creating the recording started its ingestion.
  const h = media.api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId));
  await h.result();
  await saveHistory('media-ingestion', 'url-v1', h);

  // A direct upload: created, its bytes sent in two tus PATCHes, encoded and published; and one cancelled.
  const call = (p: string, init: RequestInit & { json?: unknown } = {}) =>
    media.api.request(p, { ...init, headers: { 'X-Service-Api-Key': media.org.apiKey } });
  const uploaded = async (cancel: boolean) => {
    const recording = await call('/v3/rest/recordings', { method: 'POST', json: { record: { externalId: `capture-upload-${cancel}` } } });
    const id = (recording.body as { id: string }).id;
    const upload = (
      await call(`/v3/rest/recordings/${id}/uploads`, { method: 'POST', json: { fileName: 'tone.wav', fileSize: tone.length } })
    ).body as { uploadId: string; uploadUrl: string };
    if (cancel) {
      await call(`/v3/rest/recordings/${id}/uploads/${upload.uploadId}`, { method: 'DELETE' });
    } else {
      const half = Math.floor(tone.length / 2);
      for (const [offset, chunk] of [
        [0, tone.subarray(0, half)],
        [half, tone.subarray(half)],
      ] as const) {
        await fetch(upload.uploadUrl, {
          method: 'PATCH',
          body: chunk,
          headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
        });
      }
    }
    const handle = media.api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(id));
    await handle.result();
    return handle;
  };
  await saveHistory('media-ingestion', 'upload-v1', await uploaded(false));
  await saveHistory('media-ingestion', 'upload-cancelled-v1', await uploaded(true));

  // A meeting join with the local recorder: bot created, joining, in call, recording, done, media handed off.
  const member = await createTestUser(media.pool, media.org.organizationId);
  const joined = await media.api.request('/v3/rest/recordings/meeting-joins', {
    method: 'POST',
    headers: { Authorization: `Bearer ${member.accessToken}` },
    json: { type: 'meetingUrl', joinUrl: 'https://meet.google.com/abc-defg-hij' },
  });
  if (joined.status !== 201) throw new Error(`meeting join: ${joined.status}`);
  const meeting = media.api.temporal.client.workflow.getHandle(
    meetingJoinIdFor(TEST_SIGNING_SECRET, media.org.organizationId, 'google_meet:abc-defg-hij'),
  );
  await meeting.result();
  await saveHistory('meeting-join', 'v1', meeting);
} finally {
  await media.close();
  server.close();
  await rm(mediaDir, { recursive: true, force: true });
  await stopTestStack();
}
