/**
 * The physical limit of bench/webhook-delivery.ts, in a process of its own as the worker's sender
 * is: the given bodies POSTed straight to the receiver, each signed as the sender signs
 * (src/webhooks/signing.ts) under a fresh webhook-id, through one undici Agent, `concurrency` in
 * flight (the sender's per-endpoint concurrency). Input: a JSON file (argv[2]) with url, secret,
 * bodies, concurrency, idPrefix; prints `{"seconds": …}`.
 */
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { forEachLimited } from '../src/concurrency.js';
import { signedHeaders } from '../src/webhooks/signing.js';

const input = JSON.parse(await readFile(process.argv[2]!, 'utf8')) as {
  url: string;
  secret: string;
  bodies: string[];
  concurrency: number;
  idPrefix: string;
};
const agent = new Agent();
const indexes = input.bodies.map((_, i) => i);
let failed = 0;
const started = performance.now();
await forEachLimited(indexes, input.concurrency, async (i) => {
  const body = input.bodies[i]!;
  const id = `${input.idPrefix}${i}`;
  const res = await request(input.url, {
    method: 'POST',
    dispatcher: agent,
    headers: { ...signedHeaders([input.secret], id, Math.floor(Date.now() / 1000), body), 'content-type': 'application/json' },
    body,
  });
  await res.body.dump();
  if (res.statusCode < 200 || res.statusCode >= 300) failed++;
});
const seconds = (performance.now() - started) / 1000;
await agent.close();
process.stdout.write(`${JSON.stringify({ seconds, failed })}\n`);
