/**
 * The receiver of bench/webhook-delivery.ts in a process of its own, as an integrator's receiver
 * is on a machine of its own (in the benchmark's process it would share the API's event loop):
 * harness/webhooks.ts's TestReceiver on 127.0.0.1, verifying every request with the npm
 * `standardwebhooks` package under the secret given as argv[2], answering 204. A control server
 * answers `GET /received` with what it received: `[{id, answeredAt, verified, body}]`.
 * Prints `{"url": …, "control": …}` once both listen; ends on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestReceiver } from '../harness/webhooks.js';

const receiver = new TestReceiver();
receiver.secrets = [process.argv[2]!];
receiver.answer = () => 204;
const url = await receiver.listen();
const control = createServer((req, res) => {
  if (req.url !== '/received') return void res.writeHead(404).end();
  const records = receiver.received.map((r) => ({ id: r.id, answeredAt: r.answeredAt, verified: r.verifiedWith.length > 0, body: r.body }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(records));
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ url, control: `http://127.0.0.1:${(control.address() as AddressInfo).port}/received` })}\n`);
process.once('SIGTERM', () => {
  control.close();
  void receiver.close().then(() => process.exit(0));
});
