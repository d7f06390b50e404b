import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../src/db/pool.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { startTestApi, type TestApi } from '../../harness/app.js';
import { testConfig, TEST_SIGNING_SECRET } from '../../harness/config.js';
import { createTestDatabase, testStack } from '../../harness/stack.js';
import { startTestWorker, type TestWorker } from '../../harness/worker.js';

const run = promisify(execFile);

const GUIDES_DIR = path.join(PROJECT_ROOT, 'docs', 'guides');
const GUIDES = readdirSync(GUIDES_DIR)
  .filter((f) => f.endsWith('.md'))
  .sort();

/** Every guide's first block: the base URL every command uses, kept when the shell has one (this test sets it). */
const BASE_URL_LINE =
  'export INTAKE_URL=${INTAKE_URL:-http://localhost:8080}   # the API of npm start (PORT=18080 npm start: http://localhost:18080)';

/**
 * The blocks a guide does not run, each with the reason it gives (`<!-- guide: skip (reason) -->` above
 * the block). Any other block runs: a new one is run unless its guide says why not, and says it here.
 */
const SKIPPED: Record<string, string[]> = {
  'console.md': ['starts the whole stack: the test runs against a stack of its own', "Vite's dev server runs until stopped"],
  'idempotency.md': ["a route's source in api/, not a request: test/integration/api/idempotency.test.ts runs the routes that opt in"],
  'mcp.md': ['needs the Claude Code or Codex CLI, and a browser to sign in: test/integration/mcp/ runs the OAuth flow and the tools'],
  'recordings.md': [
    'needs media at a public URL: the offline quick-start below goes the same way from an upload',
    "needs the reader's file and tus-js-client in their app: test/integration/media/uploads.test.ts uploads with tus-js-client",
  ],
  'typed-client.md': [
    "installs into the reader's own project, from the npm registry; the test runs the client from clients/typescript/src",
    'what Node prints in a CommonJS project, not a command',
    'a server that runs until stopped: test/integration/client/webhook-node.test.ts runs it and sends it signed deliveries',
    "needs PyPI's standardwebhooks: test/integration/client/webhook-python.test.ts runs it with the package installed",
  ],
  'webhooks.md': [
    'example bodies, one per event type, not a command',
    "a route of the reader's Express app; the typed client guide's receiver runs in test/integration/client/webhook-node.test.ts",
    "a function for the reader's receiver, not a command; the signature it computes is src/webhooks/signing.ts's",
  ],
};

const FIRST: Continued = ['first-requests.md', 'first requests'];
const FEEDBACK: Continued = ['first-requests.md', 'feedback'];
const AGENT: Continued = ['agent-conversations.md', 'agent conversations'];
/** The conversation ended and waited for until processed: its signals exist (processing takes moments after an ingest). */
const AGENT_PROCESSED: Continued = ['agent-conversations.md', 'end session'];
type Continued = [guide: string, block: string];

/** A guide that goes on from another's shell (`$KEY` of First requests, …) runs those blocks first; it links that guide. */
const CONTINUES: Record<string, Continued[]> = {
  'agent-conversations.md': [FIRST],
  'data-lifecycle.md': [FIRST],
  'idempotency.md': [FIRST],
  'incremental-sync.md': [FIRST, AGENT, AGENT_PROCESSED],
  'mcp.md': [FIRST],
  'opentelemetry.md': [FIRST, AGENT],
  'recordings.md': [FIRST],
  'typed-client.md': [FIRST, FEEDBACK, AGENT],
  'webhooks.md': [FIRST],
};

/**
 * What the reader brings that no guide makes. The typed client guide's `session.json`: a session of
 * 120 rated answers, ingested and processed before the guide starts, so that its Paging block reads
 * more than one page of signals (the guide's own ingest of the file is then deduplicated).
 */
const BRINGS: Record<string, { files: Record<string, string>; shell: string }> = {
  'typed-client.md': {
    files: {
      'session.json': JSON.stringify({
        agentKey: 'support-bot',
        externalSessionId: 'chat-rated',
        status: 'ended',
        context: { environment: 'production' },
        events: [
          {
            externalEventId: 'q1',
            sequence: 1,
            revision: 1,
            occurredAt: '2026-11-02T10:00:00Z',
            type: 'user_message',
            content: 'Where is the CSV export?',
          },
          {
            externalEventId: 'a1',
            sequence: 2,
            revision: 1,
            occurredAt: '2026-11-02T10:00:02Z',
            type: 'assistant_message',
            content: 'Use Reports > Export.',
            final: true,
          },
          ...Array.from({ length: 120 }, (_, i) => ({
            externalEventId: `r${i + 1}`,
            sequence: i + 3,
            revision: 1,
            occurredAt: '2026-11-02T10:01:00Z',
            type: 'feedback',
            feedback: { targetEventExternalId: 'a1', rating: i % 3 ? 'positive' : 'negative' },
          })),
        ],
      }),
    },
    // Until every event is processed and the answer's analysis made its signal: then no signal comes later.
    shell: `
RATED=$(curl -s -X POST "$INTAKE_URL/v3/rest/agent-conversations/ingest" -H "X-Service-Agent-Key: $SECRET" \\
  -H 'Content-Type: application/json' -d @session.json | jq -r .sessionId)
for _ in $(seq 120); do
  curl -s "$INTAKE_URL/v3/rest/agent-conversations/sessions/$RATED" -H "X-Service-Api-Key: $KEY" | jq -e '.processingStatus == "completed"' > /dev/null &&
    curl -s "$INTAKE_URL/v3/rest/signals?sessionId=$RATED&source=qualitative_inference&limit=1" -H "X-Service-Api-Key: $KEY" | jq -e '.signals | length > 0' > /dev/null &&
    break
  sleep 0.5
done
`,
  },
};

/**
 * A guide's ts blocks run as one program (they build on each other, as a reader's file would), where
 * the last of them stands: after the sh blocks before it. `@intake/client` is clients/typescript/src.
 * The preamble is what the reader brings (the shell's variables named in `env`); `result` is printed.
 */
const TS_PROGRAMS: Record<string, { env: string[]; preamble: string; result: string }> = {
  'first-requests.md': {
    env: ['KEY', 'TOKEN'],
    preamble: 'const KEY = process.env.KEY!, TOKEN = process.env.TOKEN!;',
    result: '{ organizationId: org.organizationId, records: records.length, people: people.map((p) => p.email) }',
  },
  'typed-client.md': {
    env: ['SOURCE'],
    preamble: `import { readFileSync } from 'node:fs';
const session = JSON.parse(readFileSync('session.json', 'utf8'));
const id = process.env.SOURCE!;
const record = {
  display_ts: '2026-11-01T09:00:00Z',
  external_id: 'ticket-4711',
  fields: [{ category: 'content', type: 'string', name: 'body', value: 'Export to CSV fails' }],
};
const handled: unknown[] = [];
const handle = (item: unknown) => void handled.push(item);`,
    result:
      '{ organizationId: org.organizationId, records: records.length, sessionSignals: signals.length, handled: handled.length, resumeFrom: typeof resumeFrom, desk: desk.name }',
  },
};

interface Block {
  guide: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** `<!-- guide: name -->` markers above it. */
  names: string[];
  skip: string | null;
}

/** The fenced blocks of a guide, with the `<!-- guide: … -->` markers right above each (blank lines and other comments between). */
function guideBlocks(guide: string): Block[] {
  const lines = readFileSync(path.join(GUIDES_DIR, guide), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `${guide}:${i + 1}: a block without its closing fence`);
    const markers: string[] = [];
    for (let j = i - 1; j >= 0; j--) {
      const above = lines[j]!.trim();
      const marker = /^<!-- guide: (.*) -->$/.exec(above);
      if (marker) markers.unshift(marker[1]!);
      else if (above !== '' && !/^<!--.*-->$/.test(above)) break;
    }
    const skips = markers.map((m) => /^skip \((.+)\)$/.exec(m)?.[1]).filter((r) => r !== undefined);
    blocks.push({
      guide,
      line: i + 1,
      lang: open[1]!,
      code: lines.slice(i + 1, end).join('\n'),
      names: markers.filter((m) => !m.startsWith('skip')),
      skip: skips[0] ?? null,
    });
    i = end;
  }
  return blocks;
}

function namedBlock(guide: string, name: string): Block {
  const block = guideBlocks(guide).find((b) => b.names.includes(name));
  assert.ok(block, `${guide} has no block '${name}'`);
  return block;
}

/** The JSON objects printed one after another (curl adds no newline after a body). */
function jsonValues(text: string): Record<string, any>[] {
  const values: Record<string, any>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)) as Record<string, any>);
  }
  return values;
}

/** What a guide printed, block by block: the text after each `@@ <block>` line the script printed before it. */
class Output {
  readonly sections = new Map<string, string>();
  constructor(readonly stdout: string) {
    const parts = stdout.split(/\n@@ (.+)\n/);
    this.sections.set('(continued)', parts[0]!);
    for (let i = 1; i < parts.length; i += 2) this.sections.set(parts[i]!, parts[i + 1] ?? '');
  }
  text(block: string): string {
    const text = this.sections.get(block);
    assert.ok(text !== undefined, `no output of '${block}' in:\n${this.brief}`);
    return text;
  }
  json(block: string): Record<string, any>[] {
    return jsonValues(this.text(block));
  }
  /** Each block's output, cut short: what an assertion's message shows. */
  get brief(): string {
    return [...this.sections].map(([name, text]) => `@@ ${name}\n${text.length > 1200 ? `${text.slice(0, 1200)} …` : text}`).join('\n');
  }
}

/** The section name of a block's output: its first name, else its line. */
const sectionName = (b: Block) => b.names[0] ?? `line ${b.line}`;

/**
 * The shell script of a guide: the blocks it continues from, what the reader brings, then its own
 * runnable blocks in order, each after a `@@ <block>` line; its ts blocks as one program where the
 * last of them stands.
 */
function guideScript(guide: string, programFile: string): string {
  const parts: string[] = ['set -euo pipefail'];
  for (const [other, name] of CONTINUES[guide] ?? []) parts.push(`# ${other}: ${name}`, namedBlock(other, name).code);
  if (BRINGS[guide]) parts.push(BRINGS[guide].shell);
  const blocks = guideBlocks(guide);
  const lastTs = blocks.findLastIndex((b) => b.lang === 'ts' && !b.skip);
  blocks.forEach((b, i) => {
    if (b.skip) return;
    if (b.lang === 'sh') parts.push(`printf '\\n@@ %s\\n' '${sectionName(b)}'`, b.code);
    else if (b.lang === 'ts' && i === lastTs) {
      const env = TS_PROGRAMS[guide]!.env.map((name) => `${name}="$${name}"`).join(' ');
      parts.push(`printf '\\n@@ %s\\n' 'ts program'`, `${env} node --import tsx ${programFile}`);
    }
  });
  return parts.join('\n');
}

/** The guide's ts blocks (not skipped) as one program, with its preamble, printing `{ tsProgram: result }`. */
function tsProgram(guide: string): string {
  const client = path.join(PROJECT_ROOT, 'clients', 'typescript', 'src');
  const code = guideBlocks(guide)
    .filter((b) => b.lang === 'ts' && !b.skip)
    .map((b) => b.code)
    .join('\n')
    .replaceAll("'@intake/client/webhooks'", `'${client}/webhooks.ts'`)
    .replaceAll("'@intake/client'", `'${client}/index.ts'`);
  const program = TS_PROGRAMS[guide]!;
  return `${program.preamble}\n${code}\nconsole.log(JSON.stringify({ tsProgram: ${program.result} }));\n`;
}

/**
 * Every guide under docs/guides/, top to bottom, as a newcomer runs it: each runnable block in order in
 * one bash (curl, jq, `npm run -s intake`), against a stack on ports of its own (PostgreSQL and the
 * Temporal dev server of the test stack, the API on a random port: the guides' `$INTAKE_URL`, a worker
 * for processing, media, meeting bots, erasures and webhooks). The script runs in a directory of its
 * own, where `npm run` runs the repository's scripts and the files a guide writes stay.
 */
describe('guides: each runs top to bottom as written', function () {
  this.timeout(300_000);
  let pool: DatabasePool;
  let api: TestApi;
  let worker: TestWorker;
  let databaseUrl: string;
  let dataDir: string;
  let mediaDir: string;
  const dirs: string[] = [];

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-guides-data-'));
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-guides-media-'));
    worker = await startTestWorker(pool, { deps: { mediaDir } });
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    for (const dir of [dataDir, mediaDir, ...dirs]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The reader's directory: `npm run -s intake` and `npm run -s temporal` run the repository's CLI, the sample is there. */
  async function readerDirectory(guide: string): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), `intake-guide-${path.basename(guide, '.md')}-`));
    dirs.push(dir);
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const scripts = Object.fromEntries(
      ['intake', 'temporal'].map((name) => [
        name,
        pkg.scripts[name]!.replace(/ (src\/\S+)/g, (_, file: string) => ` ${path.join(PROJECT_ROOT, file)}`),
      ]),
    );
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'guide-reader', private: true, type: 'module', scripts }));
    for (const entry of ['node_modules', 'tsconfig.json', 'samples']) await symlink(path.join(PROJECT_ROOT, entry), path.join(dir, entry));
    for (const [file, text] of Object.entries(BRINGS[guide]?.files ?? {})) await writeFile(path.join(dir, file), text);
    if (TS_PROGRAMS[guide]) await writeFile(path.join(dir, 'guide-program.mts'), tsProgram(guide));
    return dir;
  }

  async function runGuide(guide: string): Promise<Output> {
    const { temporal } = await testStack();
    const cwd = await readerDirectory(guide);
    try {
      const { stdout } = await run('bash', ['-c', guideScript(guide, 'guide-program.mts')], {
        cwd,
        timeout: 280_000,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          PATH: `${path.join(PROJECT_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
          HOME: cwd,
          INTAKE_URL: api.url,
          DATA_DIR: dataDir,
          DATABASE_URL: databaseUrl,
          SIGNING_SECRET: TEST_SIGNING_SECRET,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_TASK_QUEUE: worker.taskQueue,
          LOG_LEVEL: 'silent',
        },
      });
      return new Output(stdout);
    } catch (error) {
      const e = error as Error & { stdout?: string; stderr?: string };
      throw new Error(`${guide} failed: ${e.message}\n--- stdout (its end):\n${e.stdout?.slice(-6000)}\n--- stderr:\n${e.stderr}`);
    }
  }

  it('every guide starts with the base URL line, uses it (no host:port of its own), and says why each block it skips is skipped', () => {
    for (const guide of GUIDES) {
      const blocks = guideBlocks(guide);
      assert.deepEqual([blocks[0]?.lang, blocks[0]?.code], ['sh', BASE_URL_LINE], `${guide}: its first block`);
      const text = readFileSync(path.join(GUIDES_DIR, guide), 'utf8');
      assert.equal(text.indexOf('```'), text.indexOf('\n') + 2, `${guide}: the base URL line comes right after the title`);
      for (const b of blocks.slice(1)) {
        // Commands, not the outputs shown in their comments.
        const commands = b.lang === 'sh' ? b.code.replace(/(^|\s)#.*$/gm, '') : b.code;
        assert.doesNotMatch(commands, /\b(localhost|127\.0\.0\.1):\d+/, `${guide}:${b.line}: a host and port instead of $INTAKE_URL`);
        if (!b.skip)
          assert.ok(
            ['sh', 'ts'].includes(b.lang),
            `${guide}:${b.line}: a ${b.lang || 'plain'} block runs nowhere: run it, or mark it <!-- guide: skip (why) -->`,
          );
        if (b.lang === 'ts' && !b.skip) assert.ok(TS_PROGRAMS[guide], `${guide}:${b.line}: a ts block, and no preamble to run it with`);
      }
      assert.deepEqual(
        blocks.filter((b) => b.skip).map((b) => b.skip),
        SKIPPED[guide] ?? [],
        `${guide}: the blocks it skips, and why`,
      );
      for (const [other] of CONTINUES[guide] ?? []) assert.ok(text.includes(`(${other}`), `${guide} goes on from ${other}: it links it`);
    }
    assert.deepEqual(
      GUIDES,
      GUIDES.filter((g) => guideBlocks(g).length > 0),
    );
  });

  const EXPECT: Record<string, (out: Output, orgSignals: (organizationId: string) => Promise<number>) => Promise<void> | void> = {
    'console.md'(out) {
      const [admin, member] = out.json('console users');
      assert.deepEqual([admin?.email, member?.email, member?.signIn], ['grace@example.com', 'alan@example.com', 'password'], out.brief);
      assert.match(out.text('console users'), /\n200 text\/html; charset=utf-8\n$/, out.brief);
    },
    'first-requests.md'(out) {
      const [byKey, byToken] = out.json('first requests');
      assert.equal(byKey?.name, 'Acme', out.brief);
      assert.deepEqual([byToken?.caller?.kind, byToken?.caller?.role], ['user', 'admin'], out.brief);
      const feedback = out.json('feedback');
      assert.ok(
        feedback.some((v) => v.external_id === 'ticket-4711'),
        out.brief,
      );
      assert.equal(feedback.find((v) => Array.isArray(v.records))?.records[0]?.external_id, 'ticket-4711', out.brief);
      assert.equal(feedback.find((v) => Array.isArray(v.people))?.people[0]?.email, 'ada@example.com', out.brief);
      const ts = out.json('ts program')[0]?.tsProgram;
      assert.deepEqual([ts?.organizationId, ts?.records, ts?.people], [byKey?.organizationId, 1, ['ada@example.com']], out.brief);
    },
    'agent-conversations.md'(out) {
      const ingest = out.json('agent conversations').at(-1);
      assert.deepEqual([ingest?.acceptedEventCount, ingest?.processingStatus], [3, 'pending'], out.brief);
      const session = out.json('read session')[0];
      assert.deepEqual([session?.sessionId, session?.status, session?.eventCount], [ingest?.sessionId, 'open', 3], out.brief);
      const [ended, read] = out.json('end session');
      assert.equal(ended?.acceptedEventCount, 1, out.brief);
      assert.deepEqual(
        [read?.status, read?.processingStatus, read?.processedThroughSequence, read?.eventCount],
        ['ended', 'completed', 4, 4],
        out.brief,
      );
      const [signals, usage] = out.json('signals and usage');
      assert.deepEqual(
        signals?.signals?.map((s: Record<string, unknown>) => [s.eventExternalId, s.rating, s.labels]),
        [['m2', 'positive', ['helpful']]],
        out.brief,
      );
      assert.deepEqual([usage?.unit, usage?.quantity], ['agent_response_processed', 1], out.brief);
    },
    'admin-cli.md'(out) {
      const text = out.text('admin cli');
      assert.match(text, /^usage: intake org <action> \[--flags\]\n {2}org create --name N/, out.brief);
      const [key, org] = out.json('admin cli');
      assert.deepEqual(key, { scopes: ['agents:read', 'signals:read'] }, out.brief);
      assert.deepEqual(org, { name: 'Acme', creditBalance: 100, counts: { activeApiKeys: 1 } }, out.brief);
    },
    'data-lifecycle.md'(out) {
      const listed = out.json('api keys and deletes').find((l) => Array.isArray(l.apiKeys));
      assert.ok(listed?.apiKeys.find((k: { name: string }) => k.name === 'CRM sync')?.lastUsedAt, out.brief);
      assert.match(out.text('api keys and deletes'), /204\n204\n204\n$/);
      assert.match(out.text('recording delete'), /^204\n/);
      assert.deepEqual(
        out.json('recording delete').map((v) => [v.errorCode, v.resource]),
        [['not_found', 'Recording']],
      );
      const [refused, preview, erasure, finished] = out.json('erasure');
      assert.deepEqual([refused?.errorCode, refused?.requiredScope], ['insufficient_scope', 'feedback:read'], out.brief);
      assert.equal(preview?.person?.email, 'ana@example.com', out.brief);
      assert.deepEqual([erasure?.status, finished?.erasureId, finished?.status], ['running', erasure?.erasureId, 'finished'], out.brief);
      assert.equal(out.json('export')[0]?.type, 'end', out.brief);
      const imported = out.json('import')[0];
      assert.deepEqual([imported?.counts?.person, imported?.usersNotFound], [1, []], out.brief);
      assert.ok(
        out.json('find').some((v) => Array.isArray(v.apiKeys)),
        out.brief,
      );
    },
    'idempotency.md'(out) {
      const text = out.text('example');
      assert.equal(text.match(/HTTP\/1\.1 201 Created\r?\n/g)?.length, 2, text);
      assert.equal(text.match(/^Idempotent-Replayed: true/gim)?.length, 1, text);
      const [first, replayed, reused] = jsonValues(text);
      assert.deepEqual(replayed, first, text);
      assert.equal(reused?.errorCode, 'idempotency_key_reused', text);
    },
    'incremental-sync.md'(out) {
      const first = out.json('sync-first')[0];
      assert.ok(
        first?.sessions.some((s: { externalSessionId: string }) => s.externalSessionId === 'chat-42'),
        out.brief,
      );
      assert.equal(typeof first?.nextCursor, 'string');
      // Every signal once: what the loop printed, then (resuming from its bookmark) only what came after.
      const followed = out.json('sync-follow').map((s) => s.id as string);
      assert.ok(followed.length >= 1, out.brief);
      const resumed = out.json('sync-resume')[0];
      assert.deepEqual([resumed?.has_more, typeof resumed?.nextCursor], [false, 'string'], out.brief);
      assert.deepEqual(
        resumed?.signals.filter((s: { id: string }) => followed.includes(s.id)),
        [],
        out.brief,
      );
      assert.equal(out.json('invalid cursor')[0]?.errorCode, 'invalid_cursor', out.brief);
    },
    'mcp.md'(out) {
      assert.equal(out.json('set password')[0]?.signIn, 'password', out.brief);
      assert.equal(out.json('mcp config')[0]?.mcpServers?.intake?.url, `${api.url}/mcp`, out.brief);
      const [grants, revoked] = out.json('grants');
      assert.deepEqual([grants?.grants, revoked?.revokedGrantIds], [[], []], out.brief);
    },
    'opentelemetry.md'(out) {
      const [answer, session] = out.json('one span');
      assert.deepEqual(answer, {}, out.brief);
      assert.deepEqual(session, { externalSessionId: 'otel-chat-1', status: 'open', eventCount: 2 }, out.brief);
    },
    'recordings.md'(out) {
      const [created, read, utterances, monologue, list] = out.json('create and read');
      assert.deepEqual([created?.asset?.status, created?.transcript], ['waiting', { status: 'completed', source: 'api' }], out.brief);
      assert.equal(read?.id, created?.id);
      assert.deepEqual([utterances?.utterances?.length, monologue?.monologues?.length], [3, 2], out.brief);
      assert.ok(
        list?.recordings.some((r: { id: string }) => r.id === created?.id),
        out.brief,
      );
      const asset = out.json('quick-start')[0];
      assert.deepEqual([asset?.status, asset?.errorCode], ['completed', null], out.brief);
      assert.match(out.text('quick-start'), /\n206\n?$/);
      assert.equal(out.json('upload')[0]?.phase, 'waiting', out.brief);
      const byHand = out.text('upload by hand');
      assert.match(byHand, /^upload-offset: 0\r?$/im);
      const [ready, cancel] = jsonValues(byHand);
      assert.deepEqual([ready?.phase, cancel?.errorCode], ['ready', 'upload_processing_begun'], out.brief);
      const retry = out.json('retry status')[0];
      assert.deepEqual([retry?.asset?.status, retry?.assetRetry], ['completed', null], out.brief);
      const bot = out.json('meeting join status')[0];
      assert.ok(['creating', 'joining', 'waiting_room', 'in_call', 'recording', 'done'].includes(bot?.botState), out.brief);
    },
    async 'typed-client.md'(out, orgSignals) {
      const ts = out.json('ts program')[0]?.tsProgram;
      assert.ok(ts, out.brief);
      const signals = out.json('session and signals')[0];
      assert.deepEqual([signals?.signals?.length, signals?.has_more], [100, true], out.brief);
      // The Paging block read every signal of the organization, past the first page, and kept the cursor.
      const total = await orgSignals(ts.organizationId);
      assert.ok(total > 100, `${total} signals`);
      assert.deepEqual(
        [ts.handled, ts.resumeFrom, ts.records, ts.sessionSignals, ts.desk],
        [total, 'string', 0, 100, 'Sales desk'],
        out.brief,
      );
    },
    'webhooks.md'(out) {
      const lines = out.json('webhook endpoints');
      const created = lines.find((l) => typeof l.secret === 'string' && l.description === 'CRM sync')!;
      assert.match(created?.secret as string, /^whsec_/, out.brief);
      const listed = lines.find((l) => Array.isArray(l.endpoints));
      assert.deepEqual(
        listed?.endpoints.map((e: { id: string }) => e.id),
        [created.id],
      );
      const disabled = lines.find((l) => l.disabledReason === 'disabled by a user');
      assert.deepEqual([disabled?.eventTypes, disabled?.enabled], [null, false], out.brief);
      const rotated = lines.at(-1)!;
      assert.ok(typeof rotated.secret === 'string' && rotated.secret !== created.secret && rotated.previousSecretExpiresAt, out.brief);
      assert.ok(out.text('webhook endpoints').trimEnd().endsWith('204'), out.brief);
      assert.equal(out.json('from the cli').at(-1)?.deleted, true, out.brief);
      const [list, failed, delivery, redelivered] = out.json('deliveries');
      assert.deepEqual(
        [list?.deliveries?.[0]?.eventType, failed?.deliveries, delivery?.id, redelivered?.id],
        ['webhook.test', [], list?.deliveries?.[0]?.id, list?.deliveries?.[0]?.id],
        out.brief,
      );
      assert.equal(out.json('deliveries from the cli').at(-1)?.eventType, 'webhook.test', out.brief);
    },
  };

  const orgSignals = async (organizationId: string) =>
    pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM agent_signals WHERE organization_id = ${organizationId}`,
    );

  for (const guide of GUIDES) {
    it(guide, async function () {
      assert.ok(EXPECT[guide], `${guide}: nothing says what it should print`);
      await EXPECT[guide](await runGuide(guide), orgSignals);
    });
  }
});
