import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { signingSecretPayloadKeys } from '../../../src/config.js';
import { freePort } from '../../../src/dev/net.js';
import { writeStackInfo } from '../../../src/dev/stack-file.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { EncryptionCodec } from '../../../src/temporal/codec.js';
import { codecServerApp, codecServerHosts } from '../../../src/temporal/codec-server.js';
import { waitFor } from '../../../harness/wait.js';

const passcode = 'MeetingPass-8842';
const UI = 'http://127.0.0.1:8233';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request: the Host header is ours to set (a rebound DNS name), which fetch does not allow. */
function send(port: number, o: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: o.method ?? 'POST',
        path: o.path ?? '/decode',
        headers: { 'content-type': 'application/json', ...o.headers },
      },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (body += d))
          .on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The Temporal UI's decode request body for `payloads` (base64 JSON). */
async function decodeBody(codec: EncryptionCodec, value: unknown): Promise<string> {
  const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return JSON.stringify({
    payloads: [
      {
        metadata: Object.fromEntries(Object.entries(encrypted!.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(encrypted!.data!).toString('base64'),
      },
    ],
  });
}

const decodedText = (answer: Answer) =>
  Buffer.from((JSON.parse(answer.body) as { payloads: { data: string }[] }).payloads[0]!.data, 'base64').toString();

describe('the codec server decrypts only for its operator', function () {
  this.timeout(60_000);
  const token = 'codec-token-for-the-test-0123456789abcdef';
  const codec = new EncryptionCodec(signingSecretPayloadKeys('a-signing-secret-of-at-least-32-characters!'));
  let server: Server;
  let port: number;
  let body: string;
  let host: string;

  before(async () => {
    port = await freePort();
    host = `127.0.0.1:${port}`;
    server = codecServerApp(codec, { allowedOrigins: [UI], allowedHosts: codecServerHosts('127.0.0.1', port), token }).listen(
      port,
      '127.0.0.1',
    );
    await once(server, 'listening');
    body = await decodeBody(codec, { joinUrl: `https://zoom.us/j/84211234588?pwd=${passcode}` });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('without its token: 401, nothing decoded (a wrong token, or one in another header, is none)', async () => {
    const attempts: Record<string, string>[] = [
      { host },
      { host, authorization: 'Bearer not-the-token-at-all-0123456789abcdef' },
      { host, authorization: token },
      { host, cookie: 'intake_codec=wrong' },
    ];
    for (const headers of attempts) {
      const answer = await send(port, { headers, body });
      assert.equal(answer.status, 401, JSON.stringify(headers));
      assert.ok(!answer.body.includes(passcode) && !answer.body.includes(Buffer.from(passcode).toString('base64')));
      assert.match(String(answer.headers['www-authenticate']), /^Bearer/);
    }
  });

  it('a host name that is not its own (DNS rebinding) gets 421, even with the token and for a preflight', async () => {
    for (const name of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.nip.io:${port}`, '127.0.0.1']) {
      const answer = await send(port, { headers: { host: name, authorization: `Bearer ${token}` }, body });
      assert.equal(answer.status, 421, name);
      assert.ok(!answer.body.includes(passcode));
    }
    const preflight = await send(port, {
      method: 'OPTIONS',
      headers: { host: `attacker.example:${port}`, origin: 'http://attacker.example:' + port },
    });
    assert.equal(preflight.status, 421);
  });

  it('a page of another origin gets 403, with the token too, and no CORS grant', async () => {
    for (const origin of ['https://evil.example', 'http://localhost:9999', 'null']) {
      const answer = await send(port, { headers: { host, origin, authorization: `Bearer ${token}` }, body });
      assert.equal(answer.status, 403, origin);
      assert.equal(answer.headers['access-control-allow-origin'], undefined);
      const preflight = await send(port, { method: 'OPTIONS', headers: { host, origin, 'access-control-request-method': 'POST' } });
      assert.equal(preflight.status, 403);
    }
  });

  it('with its token, from the CLI (no Origin) or the Temporal UI (its origin), it decodes', async () => {
    const cli = await send(port, { headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` }, body });
    assert.equal(cli.status, 200, cli.body);
    assert.match(decodedText(cli), new RegExp(`pwd=${passcode}`));
    const preflight = await send(port, {
      method: 'OPTIONS',
      headers: { host, origin: UI, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], UI);
    const ui = await send(port, { headers: { host, origin: UI, authorization: `Bearer ${token}`, 'x-namespace': 'default' }, body });
    assert.equal(ui.status, 200);
    assert.equal(ui.headers['access-control-allow-origin'], UI);
    assert.equal(ui.headers['access-control-allow-credentials'], 'true');
  });

  it('a browser signs in once at /session: the HttpOnly, same-site cookie is then the credential the UI sends', async () => {
    assert.equal((await send(port, { method: 'GET', path: '/session?token=wrong', headers: { host } })).status, 401);
    const signIn = await send(port, { method: 'GET', path: `/session?token=${encodeURIComponent(token)}`, headers: { host } });
    assert.equal(signIn.status, 303);
    assert.equal(signIn.headers.location, '/session');
    const cookie = String(signIn.headers['set-cookie']);
    assert.match(cookie, /intake_codec=/);
    assert.match(cookie, /httponly/i);
    assert.match(cookie, /samesite=strict/i);
    const jar = cookie.split(';')[0]!;
    const ui = await send(port, { headers: { host, origin: UI, cookie: jar }, body });
    assert.equal(ui.status, 200);
    assert.match(decodedText(ui), new RegExp(`pwd=${passcode}`));
    assert.equal((await send(port, { method: 'GET', path: '/session', headers: { host, cookie: jar } })).status, 200);
  });
});

describe('`npm run codec-server` in development', function () {
  this.timeout(60_000);
  let dataDir: string;
  let child: ChildProcess | undefined;
  after(async () => {
    child?.kill('SIGTERM');
    if (child && child.exitCode === null) await once(child, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  });

  it("finds the running dev stack's keys, prints how to sign in, and decodes with the token it printed", async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-codec-dev-'));
    const signingSecret = 'the-dev-stacks-own-signing-secret-0123456789';
    await writeStackInfo(dataDir, {
      databaseUrl: 'postgres://x@127.0.0.1:1/x',
      temporalAddress: '127.0.0.1:1',
      temporalUiUrl: 'http://127.0.0.1:8233',
      apiUrl: 'http://127.0.0.1:1',
      signingSecret,
      pid: process.pid,
    });
    const port = await freePort();
    let output = '';
    // As a newcomer runs it: no SIGNING_SECRET, no TEMPORAL_PAYLOAD_KEYS, no token.
    child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', 'codec-server.ts')], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, CODEC_SERVER_PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    assert.ok(await waitFor(async () => /session\?token=/.test(output) || child!.exitCode !== null, 30_000), output);
    assert.equal(child.exitCode, null, output);
    const token = /session\?token=(\S+)/.exec(output)![1]!;
    assert.match(output, /Include cross-origin credentials/);
    assert.match(output, /--codec-auth 'Bearer /);
    const codec = new EncryptionCodec(signingSecretPayloadKeys(signingSecret));
    const body = await decodeBody(codec, { joinUrl: `https://zoom.us/j/1?pwd=${passcode}` });
    assert.equal((await send(port, { headers: { host: `127.0.0.1:${port}` }, body })).status, 401);
    const answer = await send(port, { headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` }, body });
    assert.equal(answer.status, 200, answer.body);
    assert.match(decodedText(answer), new RegExp(`pwd=${passcode}`));
  });
});
