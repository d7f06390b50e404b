import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createMcpServer } from '../../../src/mcp/tools.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { startTestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { feedbackContext, type FeedbackContext } from '../../helpers/feedback.js';
import { createSignInUser, mcpAccessToken } from '../../../harness/oauth-browser.js';

const fixture = (name: string) => readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'coding-sessions', name), 'utf8');

/** The MCP server driven by the SDK's own client over Streamable HTTP, as an MCP client would. */
describe('MCP server: coding-agent session tools', function () {
  this.timeout(60_000);
  let t: FeedbackContext;
  let client: Client;
  let token: string;

  async function connect(accessToken: string): Promise<Client> {
    const c = new Client({ name: 'intake-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${t.api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
      }),
    );
    return c;
  }
  const call = async (name: string, args: Record<string, unknown>, c = client) =>
    (await c.callTool({ name, arguments: args })) as CallToolResult;
  const structured = (r: CallToolResult) => {
    assert.ok(!r.isError, JSON.stringify(r.content));
    return r.structuredContent as Record<string, any>;
  };
  const errorText = (r: CallToolResult) => {
    assert.equal(r.isError, true, JSON.stringify(r));
    return (r.content[0] as { text: string }).text;
  };

  before(async () => {
    t = await feedbackContext();
    // Tools are called as an MCP client calls them: with an OAuth access token the user approved.
    token = await mcpAccessToken(t.api.url, await createSignInUser(t.pool));
    client = await connect(token);
  });
  after(async () => {
    await client?.close();
    await t?.close();
  });

  it('lists the six tools with input and output schemas; mutating tools are not read-only, reads are', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual([...byName.keys()].sort(), [
      'associate-agent-session',
      'create-project',
      'get-project',
      'list-agent-sessions',
      'list-associated-agent-sessions',
      'upload-agent-session',
    ]);
    for (const name of ['create-project', 'upload-agent-session', 'associate-agent-session']) {
      assert.equal(byName.get(name)?.annotations?.readOnlyHint, false, name);
    }
    for (const name of ['get-project', 'list-associated-agent-sessions', 'list-agent-sessions'])
      assert.equal(byName.get(name)?.annotations?.readOnlyHint, true, name);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
    }
    assert.deepEqual(byName.get('upload-agent-session')?.inputSchema.required, ['content']);
  });

  it('create, upload both native formats, associate, verify', async () => {
    const project = structured(await call('create-project', { name: 'Checkout service', description: 'Payments refactor' }));
    assert.equal(project.name, 'Checkout service');
    assert.match(project.publicId, /^[0-9a-f-]{36}$/);

    const claude = structured(await call('upload-agent-session', { content: fixture('claude-code.jsonl') }));
    assert.equal(claude.format, 'claude-code');
    assert.ok(claude.eventCount >= 2);
    const codex = structured(await call('upload-agent-session', { content: fixture('codex.jsonl'), title: 'Fix flaky test' }));
    assert.deepEqual([codex.format, codex.title], ['codex', 'Fix flaky test']);

    for (const session of [claude, codex]) {
      const assoc = structured(
        await call('associate-agent-session', { resourceType: 'project', resourceId: project.publicId, sessionId: session.sessionId }),
      );
      assert.deepEqual(
        { ...assoc, associatedAt: undefined },
        { resourceType: 'project', resourceId: project.publicId, sessionId: session.sessionId, associated: true, associatedAt: undefined },
      );
    }
    const again = structured(
      await call('associate-agent-session', { resourceType: 'project', resourceId: project.publicId, sessionId: claude.sessionId }),
    );
    assert.equal(again.associated, true, 'repeating is harmless');

    const got = structured(await call('get-project', { publicId: project.publicId }));
    assert.deepEqual(
      [got.publicId, got.name, got.description, got.associatedSessionCount],
      [project.publicId, 'Checkout service', 'Payments refactor', 2],
    );
    const listed = structured(await call('list-associated-agent-sessions', { resourceType: 'project', resourceId: project.publicId }));
    assert.deepEqual(
      listed.sessions.map((s: { sessionId: string; format: string }) => [s.sessionId, s.format]),
      [
        [claude.sessionId, 'claude-code'],
        [codex.sessionId, 'codex'],
      ],
    );
    assert.equal(listed.sessions[0].eventCount, claude.eventCount);
  });

  it('keeps visible user and assistant text only and masks secrets; the same file again is the same session', async () => {
    const content = fixture('claude-code.jsonl');
    const first = structured(await call('upload-agent-session', { content }));
    const second = structured(await call('upload-agent-session', { content, format: 'claude-code' }));
    assert.equal(second.sessionId, first.sessionId);
    assert.equal(second.created, false);
    const events = await t.pool.oneFirst(sql.type(z.object({ events: z.array(z.object({ type: z.string(), content: z.string() })) }))`
      SELECT events FROM coding_sessions WHERE id = ${first.sessionId as string}`);
    assert.ok(events.every((e) => e.type === 'user_message' || e.type === 'assistant_message'));
    const text = JSON.stringify(events);
    assert.ok(!/ghp_[A-Za-z0-9]{36}/.test(text), 'the token in the fixture is masked');
    assert.match(text, /\[REDACTED:/);
    assert.ok(!text.includes('tool_use') && !text.includes('"thinking"'));
  });

  it('the same file uploaded concurrently is one session', async () => {
    const content = fixture('codex-legacy.jsonl');
    const results = (await Promise.all(Array.from({ length: 6 }, () => call('upload-agent-session', { content })))).map(structured);
    assert.equal(new Set(results.map((r) => r.sessionId)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1, 'exactly one upload created it');
    assert.equal(
      await t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM coding_sessions WHERE id = ${results[0]?.sessionId as string}`),
      1,
    );
  });

  it('lists associations page by page with a cursor', async () => {
    const project = structured(await call('create-project', { name: 'Paged' }));
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const content = JSON.stringify({ type: 'user_message', content: `paged session ${i}` });
      const session = structured(await call('upload-agent-session', { content, title: `Session ${i}` }));
      structured(
        await call('associate-agent-session', { resourceType: 'project', resourceId: project.publicId, sessionId: session.sessionId }),
      );
      ids.push(session.sessionId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = structured(
        await call('list-associated-agent-sessions', {
          resourceType: 'project',
          resourceId: project.publicId,
          limit: 2,
          ...(cursor ? { cursor } : {}),
        }),
      );
      assert.ok(page.sessions.length <= 2);
      seen.push(...page.sessions.map((s: { sessionId: string }) => s.sessionId));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    assert.deepEqual([seen, pages], [ids, 3]);
    assert.match(
      errorText(await call('list-associated-agent-sessions', { resourceType: 'project', resourceId: project.publicId, cursor: 'bm9wZQ' })),
      /Invalid cursor/,
    );
  });

  it('normalized events upload too', async () => {
    const r = structured(await call('upload-agent-session', { content: fixture('normalized.jsonl') }));
    assert.equal(r.format, 'normalized');
    assert.ok(r.eventCount >= 2);
  });

  it('tool errors: malformed JSONL names its lines; unknown or other-organization ids; no messages', async () => {
    assert.match(errorText(await call('upload-agent-session', { content: fixture('malformed.jsonl') })), /line 2, 4/);
    assert.match(errorText(await call('upload-agent-session', { content: '{"hello": "world"}\n' })), /detect the format/);
    assert.match(errorText(await call('upload-agent-session', { content: '\n \n' })), /the file is empty/);
    const onlyContext = JSON.stringify({
      timestamp: '2026-10-02T14:00:00Z',
      type: 'response_item',
      payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>x</environment_context>' }] },
    });
    assert.match(
      errorText(await call('upload-agent-session', { content: onlyContext })),
      /No visible user or assistant messages found \(read as codex\)/,
    );
    assert.match(errorText(await call('get-project', { publicId: '00000000-0000-4000-8000-000000000000' })), /Project .* not found/);
    assert.match(errorText(await call('get-project', { publicId: 'not-a-uuid' })), /not found/);
    const project = structured(await call('create-project', { name: 'Mine' }));
    assert.match(
      errorText(
        await call('associate-agent-session', {
          resourceType: 'project',
          resourceId: project.publicId,
          sessionId: '00000000-0000-4000-8000-000000000000',
        }),
      ),
      /Agent session .* not found/,
    );
    // A user of another organization (createSignInUser makes one of its own).
    const stranger = await connect(await mcpAccessToken(t.api.url, await createSignInUser(t.pool)));
    try {
      assert.match(errorText(await call('get-project', { publicId: project.publicId }, stranger)), /not found in your organization/);
      assert.match(
        errorText(await call('list-associated-agent-sessions', { resourceType: 'project', resourceId: project.publicId }, stranger)),
        /not found/,
      );
      const theirs = structured(await call('upload-agent-session', { content: fixture('codex.jsonl') }, stranger));
      assert.match(
        errorText(
          await call('associate-agent-session', { resourceType: 'project', resourceId: project.publicId, sessionId: theirs.sessionId }),
        ),
        /Agent session .* not found/,
      );
    } finally {
      await stranger.close();
    }
    const invalid = await call('associate-agent-session', { resourceType: 'folder', resourceId: project.publicId, sessionId: 'x' });
    assert.equal(invalid.isError, true, 'resourceType must be project');
  });

  it('401 with WWW-Authenticate and resource metadata without a token; API keys and agent secrets are refused', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const headers = { accept: 'application/json, text/event-stream' };
    const none = await t.api.request('/mcp', { method: 'POST', json: body, headers });
    assert.equal(none.status, 401);
    assert.match(
      none.headers.get('www-authenticate') ?? '',
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="projects:read sessions:upload sessions:associate"$/,
    );
    const key = await t.api.request('/mcp', { method: 'POST', json: body, headers: { ...headers, 'X-Service-Api-Key': t.org.apiKey } });
    assert.equal(key.status, 401);
    assert.match(key.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const agent = await t.api.request('/mcp', {
      method: 'POST',
      json: body,
      headers: { ...headers, 'X-Service-Agent-Key': 'iak_x', Authorization: `Bearer ${token}` },
    });
    assert.equal(agent.status, 401);
    const bad = await t.api.request('/mcp', { method: 'POST', json: body, headers: { ...headers, Authorization: 'Bearer nope' } });
    assert.deepEqual([bad.status, bad.body.errorCode], [401, 'invalid_credentials']);
    await assert.rejects(connect('nope'), 'the SDK client fails to connect with a bad token');
  });

  it('malformed JSON-RPC: 400 or 406 with a JSON-RPC error or the service error body, never a 500', async () => {
    const headers = { Authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' };
    const post = (init: RequestInit & { json?: unknown }) =>
      t.api.request('/mcp', { method: 'POST', ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
    const jsonRpcError =
      /^(Parse error: Invalid JSON-RPC message|Not Acceptable: Client must accept both application\/json and text\/event-stream)$/;
    for (const [name, init, status, code] of [
      ['empty object', { json: {} }, 400, -32700],
      ['no method', { json: { jsonrpc: '2.0', id: 1 } }, 400, -32700],
      ['wrong version', { json: { jsonrpc: '1.0', id: 1, method: 'ping' } }, 400, -32700],
      [
        'no event-stream in Accept',
        { json: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { accept: 'application/json' } },
        406,
        -32000,
      ],
    ] as const) {
      const res = await post(init);
      assert.deepEqual([res.status, res.body.jsonrpc, res.body.error?.code, res.body.id], [status, '2.0', code, null], name);
      assert.match(res.body.error.message, jsonRpcError, name);
    }
    for (const [name, init, errorCode] of [
      ['empty batch', { json: [] }, 'validation_failed'],
      ['not JSON', { body: '{"jsonrpc":', headers: { 'content-type': 'application/json' } }, 'malformed_json'],
      ['a bare string', { json: 'ping' }, 'malformed_json'],
    ] as const) {
      const res = await post(init);
      assert.deepEqual([res.status, res.body.errorCode], [400, errorCode], name);
      assert.equal(typeof res.body.message, 'string', name);
    }
    const unknownTool = await call('no-such-tool', {});
    assert.match(errorText(unknownTool), /no-such-tool/);
  });

  it('GET and DELETE /mcp: 405, the server is stateless and opens no event stream', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await t.api.request('/mcp', { method, headers: { Authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal(res.body.errorCode, 'method_not_allowed');
    }
  });

  it('rate limits each user: 429 with Retry-After past MCP_RATE_LIMIT_PER_MINUTE', async () => {
    const limited = await startTestApi({
      pool: t.pool,
      databaseUrl: t.databaseUrl,
      config: testConfig({ MCP_RATE_LIMIT_PER_MINUTE: '3' }),
    });
    try {
      const user = await mcpAccessToken(limited.url, await createSignInUser(t.pool));
      const headers = { accept: 'application/json, text/event-stream', Authorization: `Bearer ${user}` };
      const ping = () => limited.request('/mcp', { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await ping()).status);
      assert.deepEqual(statuses, [200, 200, 200]);
      const over = await ping();
      assert.deepEqual([over.status, over.body.errorCode], [429, 'rate_limited']);
      assert.match(over.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(over.headers.get('ratelimit-limit'), '3');
    } finally {
      await limited.close();
    }
  });

  it('an internal failure in a tool is logged; the user sees a tool error with the request id, no internals', async () => {
    const broken = await createDatabasePool(t.databaseUrl);
    await broken.end();
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const server = createMcpServer(
      broken,
      { organizationId: t.org.organizationId, userId: randomUUID() },
      { log, requestId: 'req-12345678' },
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const local = new Client({ name: 'intake-test', version: '1.0.0' });
    await Promise.all([server.connect(serverSide), local.connect(clientSide)]);
    try {
      const text = errorText(await call('get-project', { publicId: randomUUID() }, local));
      assert.equal(text, 'The tool failed because of an internal error. Retry later, or quote request id req-12345678 to support.');
      assert.equal(lines.length, 1);
      assert.match(lines[0] ?? '', /"msg":"MCP tool failed"/);
    } finally {
      await local.close();
      await server.close();
    }
  });

  it('serves protected resource metadata (RFC 9728)', async () => {
    for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await t.api.request(p);
      assert.equal(res.status, 200);
      assert.equal(res.body.resource, `${t.api.url}/mcp`);
      assert.deepEqual(res.body.authorization_servers, [t.api.url]);
      assert.deepEqual(res.body.bearer_methods_supported, ['header']);
    }
  });
});
