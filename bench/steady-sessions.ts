/**
 * The sessions of the steady agent load that `agent-processing` and `webhook-delivery` run: each
 * request is one turn (a user message and the assistant's answer, two events) of one session, and
 * the sessions are opened first (one turn each, processed, their workflows running), as in
 * production, where sessions last far longer than a benchmark.
 */
import { sql } from 'slonik';
import { z } from 'zod';
import { sleep } from '../src/dev/net.js';
import { assistantMessage, processingContext, sessionRequest, userMessage, type TestAgentApp } from '../harness/agents.js';

export type Ctx = Awaited<ReturnType<typeof processingContext>>;

/** The production defaults of what tests shorten: session workflows are told at most once a minute. */
export const PRODUCTION_CADENCE = { AGENT_SESSION_IDLE_SECONDS: '3600', AGENT_WORKFLOW_SIGNAL_SECONDS: '60' };
/** A message that makes the local extractor find signals. */
export const TEXT = 'The export to CSV drops the last column when the report has more than twenty columns. Can you add a fix? ';

/** Sends turn `round` of session `s` (external id `<prefix>-<s>`); answers its session id. */
export type TurnSender = (s: number, round: number) => Promise<string>;

export function turnSender(ctx: Ctx, app: TestAgentApp, prefix: string): TurnSender {
  return async (s, round) => {
    const seq = round * 2 + 1;
    const res = await ctx.ingest(
      app,
      sessionRequest(app, [userMessage(seq, `${TEXT}${round}`), assistantMessage(seq + 1, `answer ${round}`)], {
        externalSessionId: `${prefix}-${s}`,
      }),
    );
    if (res.status !== 202) throw new Error(`ingest ${res.status}`);
    return (res.body as { sessionId: string }).sessionId;
  };
}

/** Every session processed its first turn, its workflow was signalled, and no analysis is queued. */
const sessionsSettled = (ctx: Ctx, ids: string[]) =>
  ctx.pool.oneFirst(sql.type(z.object({ ok: z.boolean() }))`
  SELECT bool_and(s.processed_through_sequence = 2 AND s.workflow_signalled_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM agent_analysis_jobs j WHERE j.session_id = s.id AND j.status = 'queued')) AS ok
  FROM agent_sessions s WHERE s.id = ANY(${sql.array(ids, 'uuid')})`);

/** Opens `count` sessions with their first turn (round 0), 50 at a time, and waits until they settled; answers their ids. */
export async function openSessions(ctx: Ctx, send: TurnSender, count: number): Promise<string[]> {
  const opened: string[] = [];
  for (let s = 0; s < count; s += 50)
    opened.push(...(await Promise.all(Array.from({ length: Math.min(50, count - s) }, (_, k) => send(s + k, 0)))));
  while (!(await sessionsSettled(ctx, opened))) await sleep(100);
  return opened;
}
