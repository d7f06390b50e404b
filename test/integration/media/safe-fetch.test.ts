import { strict as assert } from 'node:assert';
import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { AssetFetchError, MAX_MEDIA_BYTES, PUBLIC_ADDRESSES, SafeFetcher, type AddressPolicy } from '../../../src/media/safe-fetch.js';
import { LOOPBACK_POLICY } from '../../../harness/worker.js';
import { listenLocal, closeServer } from '../../../harness/http.js';
import { freePort } from '../../../src/dev/net.js';

/** A resolver that answers like DNS would, for the names the tests use. */
async function testResolver(hostname: string): Promise<LookupAddress[]> {
  const answers: Record<string, LookupAddress[]> = {
    'media.test': [{ address: '127.0.0.1', family: 4 }],
    'internal.test': [{ address: '10.0.0.5', family: 4 }],
    'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    'v6-internal.test': [{ address: 'fd00::1', family: 6 }],
    'mixed.test': [
      { address: '127.0.0.1', family: 4 },
      { address: '192.168.1.10', family: 4 },
    ],
  };
  if (hostname === 'flaky.test') throw Object.assign(new Error('temporary failure'), { code: 'EAI_AGAIN' });
  const found = answers[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
}

describe('SafeFetcher: SSRF-safe media transfer', function () {
  this.timeout(30_000);
  let server: Server;
  let port: number;
  let seen: IncomingMessage[] = [];
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/audio.mp3': (_q, r) => r.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '2048' }).end(Buffer.alloc(2048, 7)),
    '/chunked.ogg': (_q, r) => {
      r.writeHead(200, { 'content-type': 'audio/ogg; codecs=opus' });
      r.write(Buffer.alloc(600, 1));
      r.end(Buffer.alloc(600, 2));
    },
    '/empty.wav': (_q, r) => r.writeHead(200, { 'content-type': 'audio/wav', 'content-length': '0' }).end(),
    '/empty-chunked.wav': (_q, r) => {
      r.writeHead(200, { 'content-type': 'audio/wav' });
      r.end();
    },
    '/page.html': (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'),
    '/huge.mp4': (_q, r) => r.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(10 * 1024 ** 3) }).end(),
    '/cut.mp3': (_q, r) => {
      r.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '5000' });
      r.write(Buffer.alloc(1000, 3), () => r.socket?.destroy());
    },
    '/missing': (_q, r) => r.writeHead(404).end(),
    '/private': (_q, r) => r.writeHead(403).end(),
    '/busy': (_q, r) => r.writeHead(503).end(),
    '/teapot': (_q, r) => r.writeHead(418).end(),
  };

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      const url = new URL(req.url ?? '/', 'http://x');
      const to = url.searchParams.get('to');
      if (url.pathname === '/redirect' && to) return void res.writeHead(302, { location: to }).end();
      const hops = Number(url.searchParams.get('hops') ?? 0);
      if (url.pathname === '/chain') {
        return void res.writeHead(301, { location: hops > 0 ? `/chain?hops=${hops - 1}` : '/audio.mp3' }).end();
      }
      (routes[url.pathname] ?? routes['/missing']!)(req, res);
    });
    port = await listenLocal(server);
  });
  after(async () => {
    await closeServer(server);
  });
  beforeEach(() => {
    seen = [];
  });

  const fetcher = (o: { policy?: AddressPolicy; maxBytes?: number; allowedHosts?: string[] } = {}) =>
    new SafeFetcher({
      policy: o.policy ?? LOOPBACK_POLICY,
      resolver: testResolver,
      allowedHosts: o.allowedHosts ?? [],
      ...(o.maxBytes ? { maxBytes: o.maxBytes } : {}),
    });
  async function failure(url: string, o: Parameters<typeof fetcher>[0] = {}): Promise<AssetFetchError> {
    const f = fetcher(o);
    try {
      const media = await f.open(url);
      await buffer(media.body);
      return assert.fail('expected the transfer to fail');
    } catch (error) {
      assert.ok(error instanceof AssetFetchError, `expected an AssetFetchError, got ${String(error)}`);
      return error;
    } finally {
      await f.close();
    }
  }

  it('streams media by name with an unauthenticated GET', async () => {
    const f = fetcher();
    const media = await f.open(`http://media.test:${port}/audio.mp3`);
    assert.deepEqual([media.contentType, media.contentLength], ['audio/mpeg', 2048]);
    assert.equal((await buffer(media.body)).length, 2048);
    assert.equal(seen[0]?.method, 'GET');
    assert.equal(seen[0]?.headers.authorization, undefined);
    assert.equal(seen[0]?.headers.cookie, undefined);
    await f.close();
  });

  it('follows up to five redirects, each checked; more is asset_too_many_redirects', async () => {
    const f = fetcher();
    const media = await f.open(`http://media.test:${port}/chain?hops=3`);
    assert.equal(media.url, `http://media.test:${port}/audio.mp3`);
    assert.equal((await buffer(media.body)).length, 2048);
    await f.close();
    const e = await failure(`http://media.test:${port}/chain?hops=5`);
    assert.deepEqual([e.code, e.retryable], ['asset_too_many_redirects', false]);
  });

  for (const [name, target] of [
    ['a literal private address', 'http://10.0.0.1/x.mp3'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['a literal IPv6 loopback', 'http://[::1]/x.mp3'],
    ['an IPv4-mapped IPv6 private address', 'http://[::ffff:192.168.0.1]/x.mp3'],
    ['a name that resolves to a private address', 'http://internal.test/x.mp3'],
    ['a name that resolves to the metadata address', 'http://metadata.test/x.mp3'],
    ['a name that resolves to a unique-local IPv6 address', 'http://v6-internal.test/x.mp3'],
    ['a name with one public and one private answer', 'http://mixed.test/x.mp3'],
  ]) {
    it(`blocks a redirect to ${name}`, async () => {
      const e = await failure(`http://media.test:${port}/redirect?to=${encodeURIComponent(target!)}`);
      assert.deepEqual([e.code, e.retryable], ['asset_url_blocked', false]);
    });
  }

  it('blocks a private address resolved for the first URL too, and never connects to it', async () => {
    const e = await failure(`http://internal.test:${port}/audio.mp3`);
    assert.equal(e.code, 'asset_url_blocked');
    assert.match(e.message, /10\.0\.0\.5/);
    assert.equal(seen.length, 0);
  });

  it('the production policy has no loopback exception', async () => {
    for (const url of [`http://127.0.0.1:${port}/audio.mp3`, `http://media.test:${port}/audio.mp3`]) {
      const e = await failure(url, { policy: PUBLIC_ADDRESSES });
      assert.equal(e.code, 'asset_url_blocked', url);
    }
    assert.equal(seen.length, 0);
  });

  it('an allowed host name (MEDIA_FETCH_ALLOWED_HOSTS) is dialled whatever it resolves to; literal addresses and a redirect elsewhere are still checked', async () => {
    const f = fetcher({ policy: PUBLIC_ADDRESSES, allowedHosts: ['media.test'] });
    try {
      const media = await f.open(`http://media.test:${port}/audio.mp3`);
      assert.ok((await buffer(media.body)).length > 0);
    } finally {
      await f.close();
    }
    const literal = await failure(`http://127.0.0.1:${port}/audio.mp3`, { policy: PUBLIC_ADDRESSES, allowedHosts: ['media.test'] });
    assert.equal(literal.code, 'asset_url_blocked');
    const elsewhere = await failure(
      `http://media.test:${port}/redirect?to=${encodeURIComponent(`http://internal.test:${port}/audio.mp3`)}`,
      { policy: PUBLIC_ADDRESSES, allowedHosts: ['media.test'] },
    );
    assert.equal(elsewhere.code, 'asset_url_blocked');
  });

  it('refuses other schemes and embedded credentials, also in a redirect', async () => {
    for (const to of ['file:///etc/passwd', 'ftp://media.test/x.mp3', `http://user:pw@media.test:${port}/audio.mp3`]) {
      const e = await failure(`http://media.test:${port}/redirect?to=${encodeURIComponent(to)}`);
      assert.deepEqual([e.code, e.retryable], ['asset_url_invalid', false], to);
    }
  });

  it("accepts only the spec's media content types", async () => {
    const e = await failure(`http://media.test:${port}/page.html`);
    assert.deepEqual([e.code, e.retryable], ['asset_unsupported_content_type', false]);
    const f = fetcher();
    const ogg = await f.open(`http://media.test:${port}/chunked.ogg`);
    assert.equal(ogg.contentType, 'audio/ogg');
    assert.equal((await buffer(ogg.body)).length, 1200);
    await f.close();
  });

  it('enforces the size cap from Content-Length and while streaming', async () => {
    const declared = await failure(`http://media.test:${port}/huge.mp4`);
    assert.deepEqual([declared.code, declared.retryable], ['asset_too_large', false]);
    const streamed = await failure(`http://media.test:${port}/chunked.ogg`, { maxBytes: 1000 });
    assert.equal(streamed.code, 'asset_too_large');
  });

  it('a successful response without bytes is retryable and never complete', async () => {
    for (const path of ['/empty.wav', '/empty-chunked.wav']) {
      const e = await failure(`http://media.test:${port}${path}`);
      assert.deepEqual([e.code, e.retryable], ['asset_empty', true], path);
    }
  });

  it('maps HTTP statuses to stable codes: missing, denied, overloaded (retryable), other', async () => {
    const cases: [string, string, boolean][] = [
      ['/missing', 'asset_not_found', false],
      ['/private', 'asset_access_denied', false],
      ['/busy', 'asset_unavailable', true],
      ['/teapot', 'asset_http_error', false],
    ];
    for (const [path, code, retryable] of cases) {
      const e = await failure(`http://media.test:${port}${path}`);
      assert.deepEqual([e.code, e.retryable], [code, retryable], path);
    }
  });

  it('DNS and network failures are retryable', async () => {
    const nx = await failure(`http://nowhere.test:${port}/audio.mp3`);
    assert.deepEqual([nx.code, nx.retryable], ['asset_dns_failed', true]);
    const flaky = await failure(`http://flaky.test:${port}/audio.mp3`);
    assert.deepEqual([flaky.code, flaky.retryable], ['asset_dns_failed', true]);
    const closedPort = await freePort(); // nothing listens there
    const refused = await failure(`http://media.test:${closedPort}/audio.mp3`);
    assert.deepEqual([refused.code, refused.retryable], ['asset_network_error', true]);
  });

  it('a connection lost in the middle of the body is a retryable network error', async () => {
    const e = await failure(`http://media.test:${port}/cut.mp3`);
    assert.deepEqual([e.code, e.retryable], ['asset_network_error', true]);
  });

  it("caps at 5 GiB by default (the spec's URL media limit)", () => {
    assert.equal(MAX_MEDIA_BYTES, 5 * 1024 ** 3);
  });
});
