import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { consoleRoutes } from '../../../api/console/router.js';
import { closeServer, listenLocal } from '../../../harness/http.js';

/** `/console` as the API serves a build: its files, the page for its routes, its headers. */
describe('the console route (api/console/router.ts)', () => {
  async function serve(dir: string) {
    const app = new Koa();
    app.use(consoleRoutes(dir));
    app.use((ctx) => {
      ctx.status = 404;
      ctx.body = 'next';
    });
    const server = app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${await listenLocal(server)}`;
    return { base, close: () => closeServer(server) };
  }
  function build(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'console-build-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Intake console</title>');
    writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(path.join(dir, '.sources-hash'), 'secret-ish');
    return dir;
  }

  it('serves the files as built, the page for any route, with the CSP; other paths pass on', async () => {
    const s = await serve(build());
    try {
      const page = await fetch(`${s.base}/console/sessions/123`);
      assert.equal(page.status, 200);
      assert.equal(await page.text(), '<!doctype html><title>Intake console</title>');
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(page.headers.get('cache-control'), 'no-cache');
      assert.match(
        page.headers.get('content-security-policy') ?? '',
        /^default-src 'none'; script-src 'self'; .*connect-src 'self';.*frame-ancestors 'none'/,
      );
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');

      const asset = await fetch(`${s.base}/console/assets/index-abc123.js`);
      assert.equal(asset.status, 200);
      assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');

      const bare = await fetch(`${s.base}/console`, { redirect: 'manual' });
      assert.equal(bare.status, 302);
      assert.equal(bare.headers.get('location'), '/console/');

      for (const missing of ['/console/assets/gone.js', '/console/%E0%A4%A', '/consoles', '/v3/rest/organization']) {
        const res = await fetch(`${s.base}${missing}`);
        assert.equal(res.status, 404, missing);
        assert.equal(await res.text(), 'next', `${missing}: left to the next middleware`);
      }
      const hidden = await fetch(`${s.base}/console/.sources-hash`);
      assert.doesNotMatch(await hidden.text(), /secret-ish/, "the build's own files are not served");
      const posted = await fetch(`${s.base}/console/`, { method: 'POST' });
      assert.equal(await posted.text(), 'next', 'only GET and HEAD');
    } finally {
      await s.close();
    }
  });

  it('without a build: 503 saying how to build it', async () => {
    const s = await serve(path.join(tmpdir(), 'no-such-console-build'));
    try {
      const res = await fetch(`${s.base}/console/`);
      assert.equal(res.status, 503);
      assert.match(await res.text(), /The console is not built: run `npm run build`/);
    } finally {
      await s.close();
    }
  });
});
