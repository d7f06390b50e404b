import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { generateWebhookSecret, signedHeaders } from '../../../src/webhooks/signing.js';
import { ensurePipTool } from '../../../harness/tools.js';

const run = promisify(execFile);
/** The version the guide names and `.ci/run` installs. */
const STANDARDWEBHOOKS_VERSION = '1.1.0';

/** The python block after `<!-- guide: python webhook -->` in the typed client's guide. */
function pythonSnippet(): { text: string; guide: string } {
  const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'guides', 'typed-client.md'), 'utf8');
  const at = guide.indexOf('<!-- guide: python webhook -->');
  assert.ok(at >= 0, 'docs/guides/typed-client.md has no python webhook block');
  const block = /```python\n([\s\S]*?)```/.exec(guide.slice(at));
  assert.ok(block, 'no python block after the marker');
  return { text: block[1]!, guide };
}

/** Feeds each delivery to the snippet's `receive` and prints what it returned or raised, one JSON line each. */
const DRIVER = `
import json, sys
for delivery in json.load(sys.stdin):
    try:
        print(json.dumps({"event": receive(delivery["body"].encode(), delivery["headers"])}))
    except WebhookVerificationError as error:
        print(json.dumps({"refused": str(error)}))
`;

/**
 * The guide's Python snippet, run as written with PyPI's `standardwebhooks` (installed into
 * .tools/standardwebhooks-<version> on first use), verifies what Intake's signer (src/webhooks/signing.ts) signs.
 */
describe("typed client guide: the Python webhook snippet verifies Intake's signatures (standardwebhooks from PyPI)", function () {
  this.timeout(300_000);

  it('accepts a signed delivery and a rotated pair, refuses a tampered body, an old timestamp and another secret', async () => {
    const { text, guide } = pythonSnippet();
    assert.ok(guide.includes(`standardwebhooks==${STANDARDWEBHOOKS_VERSION}`), 'the guide names the version the test installs');
    const target = await ensurePipTool('standardwebhooks', STANDARDWEBHOOKS_VERSION, path.join('standardwebhooks', 'webhooks.py'));

    const secret = generateWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'signal.created', timestamp: new Date(now * 1000).toISOString(), data: { note: 'ünïcode' } });
    const deliveries = [
      { body, headers: signedHeaders([secret], 'msg_ok', now, body) },
      { body: body.replace('signal', 'sign4l'), headers: signedHeaders([secret], 'msg_tampered', now, body) },
      { body, headers: signedHeaders([secret], 'msg_old', now - 600, body) },
      { body, headers: signedHeaders([generateWebhookSecret()], 'msg_other', now, body) },
      { body, headers: signedHeaders([generateWebhookSecret(), secret], 'msg_rotated', now, body) },
    ];
    const python = run('python3', ['-c', `${text}\n${DRIVER}`], {
      cwd: PROJECT_ROOT,
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', PYTHONPATH: target, INTAKE_WEBHOOK_SECRET: secret },
    });
    python.child.stdin!.end(JSON.stringify(deliveries));
    const { stdout } = await python;
    const results = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event?: { type: string; data: { note: string } }; refused?: string });
    assert.equal(results.length, deliveries.length, stdout);
    assert.deepEqual(results[0]!.event, JSON.parse(body));
    assert.ok(results[1]!.refused, 'a tampered body is refused');
    assert.match(results[2]!.refused ?? '', /too old/i);
    assert.ok(results[3]!.refused, 'another secret is refused');
    assert.equal(results[4]!.event?.data.note, 'ünïcode');
  });
});
