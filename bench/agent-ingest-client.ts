/**
 * The agent-ingest benchmark's HTTP client, in a process of its own (as an integrator's client
 * is): the API's event loop is not shared with the load generator. Usage: node --import tsx
 * bench/agent-ingest-client.ts '<IngestLoad JSON>'; prints the phase's Summary as JSON. With `rate`,
 * the requests are sent open loop at that rate (bench/stats.ts, loadAtRate).
 */
import { Agent, request } from 'undici';
import { event, type IngestLoad } from './agent-events.js';
import { load, loadAtRate } from './stats.js';

const o = JSON.parse(process.argv[2] ?? '{}') as IngestLoad;
const dispatcher = new Agent({ connections: o.concurrency, keepAliveTimeout: 30_000 });
const batchEvents = Array.from({ length: o.events }, (_, i) => event(i));

/** Request i: in `batch`, a new session of `events` events; in `single`, event floor(i / sessions) of session i mod sessions. */
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
const summary = o.rate
  ? await loadAtRate(o.requests, o.rate, send, { maxInFlight: o.concurrency })
  : await load(o.requests, o.concurrency, send);
process.stdout.write(`${JSON.stringify(summary)}\n`);
await dispatcher.close();
