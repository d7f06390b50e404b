/**
 * MCP uploads: p50/p99 of `upload-agent-session` through the SDK's client over HTTP for a typical
 * Claude Code session (200 turns with tool calls and thinking, ~0.4 MB) and a large one near the
 * 8,000,000-character limit, plus parsing alone of the large file (in process, no HTTP).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { parseSession } from '../src/domain/coding-sessions/index.js';
import { createDatabasePool } from '../src/db/pool.js';
import { REDACTED_PATHS } from '../src/logger.js';
import { MAX_SESSION_CHARACTERS } from '../src/mcp/tools.js';
import { startTestApi } from '../harness/app.js';
import { testConfig } from '../harness/config.js';
import { createSignInUser, mcpAccessToken } from '../harness/oauth-browser.js';
import { createTestDatabase, stopTestStack } from '../harness/stack.js';
import { load } from './stats.js';
import { installQuietRuntime } from './runtime.js';

const prose = 'We should cap the retries at three attempts and back off exponentially, then add a test for the timeout path. ';

/** A Claude Code transcript of `turns` exchanges; `salt` makes each file distinct (no deduplication). */
function claudeCodeSession(turns: number, salt: string, paragraph = 2): string {
  const lines: string[] = [JSON.stringify({ type: 'summary', summary: `Bench session ${salt}` })];
  for (let i = 0; i < turns; i += 1) {
    const at = new Date(Date.UTC(2026, 9, 1, 9) + i * 60_000).toISOString();
    lines.push(
      JSON.stringify({
        type: 'user',
        sessionId: salt,
        uuid: `u${i}`,
        timestamp: at,
        message: { role: 'user', content: `${salt} turn ${i}: ${prose.repeat(paragraph)}` },
      }),
      JSON.stringify({
        type: 'assistant',
        uuid: `t${i}`,
        timestamp: at,
        message: { id: `m${i}`, role: 'assistant', content: [{ type: 'thinking', thinking: prose.repeat(paragraph) }] },
      }),
      JSON.stringify({
        type: 'assistant',
        uuid: `c${i}`,
        timestamp: at,
        message: {
          id: `m${i}`,
          role: 'assistant',
          content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: '/src/pay.ts' } }],
        },
      }),
      JSON.stringify({
        type: 'user',
        uuid: `r${i}`,
        timestamp: at,
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'x'.repeat(400) }] },
      }),
      JSON.stringify({
        type: 'assistant',
        uuid: `a${i}`,
        timestamp: at,
        message: { id: `m${i}`, role: 'assistant', content: [{ type: 'text', text: prose.repeat(paragraph) }] },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function benchMcpUpload(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl, { poolSize: 8 });
  const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination('/dev/null'));
  const api = await startTestApi({ pool, config: testConfig(), logger });
  try {
    // An OAuth access token, as MCP clients send (the only kind /mcp takes in production).
    const accessToken = await mcpAccessToken(api.url, await createSignInUser(pool));
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
      }),
    );
    const upload = (content: string) => async () => {
      const r = (await client.callTool({ name: 'upload-agent-session', arguments: { content } })) as CallToolResult;
      if (r.isError) throw new Error(JSON.stringify(r.content).slice(0, 300));
    };

    const typical = Array.from({ length: 40 }, (_, i) => claudeCodeSession(200, `typical-${i}`));
    await upload(claudeCodeSession(200, 'warm-up'))();
    const typicalUploads = await load(typical.length, 2, (i) => upload(typical[i]!)());

    // Near the limit: as many turns as fit in MAX_SESSION_CHARACTERS.
    const perTurn = claudeCodeSession(1, 'probe', 8).length;
    const turns = Math.floor((MAX_SESSION_CHARACTERS * 0.97) / perTurn);
    const large = Array.from({ length: 5 }, (_, i) => claudeCodeSession(turns, `large-${i}`, 8));
    const rssBefore = process.memoryUsage().rss;
    const parseStarted = performance.now();
    const parsed = parseSession(large[0]!);
    const parseMs = performance.now() - parseStarted;
    const largeUploads = await load(large.length, 1, (i) => upload(large[i]!)());
    const rssAfter = process.memoryUsage().rss;
    await client.close();
    return {
      benchmark: 'mcp-upload',
      measuredAt: new Date().toISOString(),
      setup: {
        typical: {
          files: typical.length,
          turns: 200,
          characters: typical[0]!.length,
          visibleMessages: parseSession(typical[0]!).messages.length,
        },
        large: { files: large.length, turns, characters: large[0]!.length, visibleMessages: parsed.messages.length },
        note: 'client and server in one process; each file distinct, so every upload parses, sanitizes and stores',
      },
      typicalUploads,
      largeUploads,
      largeParseOnlyMs: Number(parseMs.toFixed(1)),
      rssGrowthMiB: Number(((rssAfter - rssBefore) / 2 ** 20).toFixed(1)),
    };
  } finally {
    await api.close();
    await pool.end();
    await stopTestStack();
  }
}
