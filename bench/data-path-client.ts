/**
 * The data-path benchmark's HTTP client, in a process of its own (as an integrator's is): the
 * agent-ingest client's requests (bench/agent-events.ts: alternating user messages and finalized
 * assistant responses), with the sessions spread over one or more organizations' ingest secrets.
 * Usage: node --import tsx bench/data-path-client.ts '<DataPathLoad JSON>'; prints the phase's
 * Summary as JSON.
 */
import { Agent, request } from 'undici';
import { event } from './agent-events.js';
import { load } from './stats.js';

/** One phase: `single`, request i is event floor(i / sessions) of session i mod sessions; `batch`, request i is a new session of `events` events. */
export interface DataPathLoad {
  url: string;
  /** The applications sending: session s uses credentials[s mod length]. */
  credentials: { secret: string; agentKey: string }[];
  prefix: string;
  requests: number;
  concurrency: number;
  kind: 'single' | 'batch';
  sessions: number;
  events: number;
}

const o = JSON.parse(process.argv[2] ?? '{}') as DataPathLoad;
const dispatcher = new Agent({ connections: o.concurrency, keepAliveTimeout: 30_000 });
const batchEvents = Array.from({ length: o.events }, (_, i) => event(i));

function request_(i: number): { body: string; secret: string } {
  const session = o.kind === 'batch' ? i : i % o.sessions;
  const { secret, agentKey } = o.credentials[session % o.credentials.length]!;
  const events = o.kind === 'batch' ? batchEvents : [event(Math.floor(i / o.sessions))];
  return { secret, body: JSON.stringify({ agentKey, externalSessionId: `${o.prefix}-${session}`, participants: [], events }) };
}

const send = async (i: number) => {
  const { body, secret } = request_(i);
  const res = await request(`${o.url}/v3/rest/agent-conversations/ingest`, {
    method: 'POST',
    dispatcher,
    body,
    headers: { 'content-type': 'application/json', 'x-service-agent-key': secret },
  });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`unexpected ${res.statusCode}: ${text}`);
};
const summary = await load(o.requests, o.concurrency, send);
process.stdout.write(`${JSON.stringify(summary)}\n`);
await dispatcher.close();
