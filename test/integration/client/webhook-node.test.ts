import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { generateWebhookSecret, signedHeaders } from '../../../src/webhooks/signing.js';
import { closeServer, listenLocal } from '../../../harness/http.js';
import { waitFor } from '../../../harness/wait.js';

/** The ts block after `<!-- guide: node webhook -->`, importing the client from clients/typescript/src. */
function nodeSnippet(): string {
  const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'guides', 'typed-client.md'), 'utf8');
  const at = guide.indexOf('<!-- guide: node webhook -->');
  assert.ok(at >= 0, 'docs/guides/typed-client.md has no node webhook block');
  const block = /```ts\n([\s\S]*?)```/.exec(guide.slice(at));
  assert.ok(block, 'no ts block after the marker');
  return block[1]!.replaceAll("'@intake/client/webhooks'", `'${path.join(PROJECT_ROOT, 'clients', 'typescript', 'src', 'webhooks.ts')}'`);
}

/**
 * The guide's Node receiver, run as written (tsx) on a real port, gets deliveries signed by Intake's
 * signer (src/webhooks/signing.ts) over HTTP: 204 for a signed one, 400 with the reason otherwise.
 */
describe("typed client guide: the Node webhook receiver verifies Intake's deliveries over HTTP", function () {
  this.timeout(60_000);
  let dir: string;
  let receiver: ChildProcess | undefined;
  after(async () => {
    if (receiver && receiver.exitCode === null && receiver.signalCode === null) {
      const exited = once(receiver, 'exit');
      receiver.kill();
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers 204 to a signed delivery, 400 with the reason to a tampered, stale or foreign one', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-node-webhook-'));
    const file = path.join(dir, 'receiver.ts');
    await writeFile(file, nodeSnippet());
    // A free port for the receiver: taken, then released for it.
    const probe = createServer();
    const port = await listenLocal(probe);
    await closeServer(probe);
    const secret = generateWebhookSecret();
    receiver = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), INTAKE_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const url = `http://127.0.0.1:${port}/`;
    const up = await waitFor(
      () =>
        fetch(url, { method: 'POST' }).then(
          () => true,
          () => false,
        ),
      30_000,
      100,
    );
    assert.ok(up, 'the receiver did not start');

    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'signal.created', timestamp: new Date(now * 1000).toISOString(), data: { note: 'ünïcode' } });
    const deliver = async (headers: Record<string, string>, sent = body) => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: sent });
      return [response.status, await response.text()];
    };
    assert.deepEqual(await deliver(signedHeaders([secret], 'msg_ok', now, body)), [204, '']);
    assert.deepEqual(await deliver(signedHeaders([generateWebhookSecret(), secret], 'msg_rotated', now, body)), [204, '']);
    assert.deepEqual(await deliver(signedHeaders([secret], 'msg_tampered', now, body), body.replace('signal', 'sign4l')), [
      400,
      'no_matching_signature',
    ]);
    assert.deepEqual(await deliver(signedHeaders([secret], 'msg_old', now - 600, body)), [400, 'timestamp_too_old']);
    assert.deepEqual(await deliver(signedHeaders([generateWebhookSecret()], 'msg_other', now, body)), [400, 'no_matching_signature']);
    assert.deepEqual(await deliver({}), [400, 'missing_headers']);
  });
});
