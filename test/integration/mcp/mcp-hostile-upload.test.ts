import { strict as assert } from 'node:assert';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import { createBodyChecker, type BodyChecker } from '../../../api/json-body.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createSignInUser, mcpAccessToken } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const MiB = 1024 * 1024;
const line = (type: 'user' | 'assistant', content: string, id = 'm1') =>
  JSON.stringify({ type, uuid: `${type}-${id}`, timestamp: '2026-10-01T09:00:00.000Z', message: { id, role: type, content } });

/**
 * A Claude Code user turn of 2.5 MB of unclosed `<system-reminder>` openings behind slash-command
 * plumbing (so that, once read, nothing is kept and the tool answers without touching the database).
 * Stripping it with `/<system-reminder>[\s\S]*?<\/system-reminder>/g` scanned to the end from every
 * opening: about a minute with the API's event loop blocked.
 */
const hostile = line('user', `<command-name>/review</command-name>${'<system-reminder>x'.repeat(Math.ceil((2.5 * MiB) / 18))}`);

/** MCP uploads are read in the API's threads, within a time budget, one message at most 1 MiB of text. */
describe('MCP upload-agent-session: a hostile file stalls nobody', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let api: TestApi;
  let threads: BodyChecker;
  let user: Awaited<ReturnType<typeof createSignInUser>>;
  /** Set while the hostile upload runs: a /healthz request sent when the thread starts reading it. */
  let probe: Promise<number> | null = null;
  let armed = false;
  /** Hostile reads handed to the thread. */
  let reads = 0;
  const clients: Client[] = [];

  async function connect(target: TestApi): Promise<Client> {
    const c = new Client({ name: 'intake-test', version: '1.0.0' });
    const token = await mcpAccessToken(target.url, user);
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${target.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    clients.push(c);
    return c;
  }
  const upload = async (c: Client, content: string) =>
    (await c.callTool({ name: 'upload-agent-session', arguments: { content } })) as CallToolResult;
  const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;
  const sessions = () =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM coding_sessions WHERE organization_id = ${user.organizationId}`);

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    const real = createBodyChecker({ threads: 1 })!;
    threads = {
      ...real,
      // The session is read in the thread; /healthz is asked while that read is outstanding.
      readSession: (task) => {
        const reading = real.readSession(task);
        if (armed && task.content.length > 2 * MiB) {
          reads += 1;
          probe = fetch(`${api.url}/healthz`).then((r) => r.status);
        }
        return reading;
      },
    };
    api = await startTestApi({ pool, bodyChecker: threads });
    user = await createSignInUser(pool);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await api?.close();
    await pool?.end();
  });

  it('a 2.5 MB file of unclosed <system-reminder> openings is read in a thread while the event loop keeps answering', async () => {
    const client = await connect(api);
    // The event loop's longest stall while the upload runs. Read on the event loop with the old
    // regex, it stalled for about a minute; read in the thread, parsing the checked body natively
    // and answering are all that is left on it (milliseconds). The bound is generous for a loaded
    // 2-core machine, and far below what a read on the loop costs.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    armed = true;
    const result = await upload(client, hostile);
    armed = false;
    delay.disable();
    assert.equal(reads, 1, 'the upload was read by the body-checking thread');
    assert.equal(await probe, 200, '/healthz answered while the session was being read');
    assert.ok(delay.max / 1e6 < 2_000, `the event loop stalled for ${Math.round(delay.max / 1e6)} ms`);
    assert.equal(result.isError, true);
    assert.match(text(result), /^No visible user or assistant messages found \(read as claude-code\)/);
  });

  it('a message over 1 MiB of text is refused with errorCode session_message_too_large; nothing is stored', async () => {
    const client = await connect(api);
    const before = await sessions();
    const big = [line('user', 'Please review this log.'), line('assistant', 'a'.repeat(MiB + 1))].join('\n');
    const refused = await upload(client, big);
    assert.equal(refused.isError, true);
    assert.equal(
      text(refused),
      'Message 2 (assistant) has 1,048,577 characters of text; the limit is 1,048,576 a message. Remove it or shorten it, then upload again. (errorCode session_message_too_large)',
    );
    assert.deepEqual(refused._meta, { errorCode: 'session_message_too_large' });
    assert.equal(await sessions(), before);
    // At the limit it is stored.
    const atLimit = await upload(client, [line('user', 'Please review this log.'), line('assistant', 'a'.repeat(MiB))].join('\n'));
    assert.ok(!atLimit.isError, text(atLimit));
    assert.equal((atLimit.structuredContent as { eventCount: number }).eventCount, 2);
  });

  it('past its time budget a read is stopped and answered with errorCode session_parse_timeout', async () => {
    // A budget no 8 MB read can meet: the thread is stopped, the upload gets a clear answer.
    const strict = createBodyChecker({ threads: 1, sessionBudgetMs: 1 })!;
    const limited = await startTestApi({ pool, bodyChecker: strict });
    try {
      const before = await sessions();
      const content = Array.from({ length: 8 }, (_, i) => line(i % 2 ? 'assistant' : 'user', `turn ${i} `.repeat(100_000), `m${i}`)).join(
        '\n',
      );
      const refused = await upload(await connect(limited), content);
      assert.equal(refused.isError, true);
      assert.match(
        text(refused),
        /^Reading the session file took longer than 0\.001 s and was stopped\. .*\(errorCode session_parse_timeout\)$/,
      );
      assert.deepEqual(refused._meta, { errorCode: 'session_parse_timeout' });
      assert.equal(await sessions(), before);
    } finally {
      await limited.close();
    }
  });
});
