import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import Koa from 'koa';
import { deriveKey } from '../auth/secrets.js';

/**
 * A codec server for the Temporal UI and CLI (Temporal's remote codec protocol): `POST /decode`
 * and `POST /encode` take and give `{payloads: [{metadata: {k: base64}, data: base64}]}`. Operators
 * who hold the payload keys run it beside their browser (`npm run codec-server`) and set its URL in
 * the UI's "Codec Server" settings: the UI then shows decoded inputs and results, the server's
 * history keeps only ciphertext.
 *
 * It decrypts meeting passcodes and everything else, so it answers only:
 * - requests for one of its own host names (`Host`): a page that rebinds its own DNS name to
 *   127.0.0.1 reaches the port but names itself, and gets 421;
 * - from a browser, the listed origins (the Temporal UI's); any other `Origin` gets 403;
 * - with its token: `Authorization: Bearer <token>` (the CLI's `--codec-auth`, scripts), or the
 *   cookie that `GET /session?token=<token>` sets in the operator's browser, which the UI sends when
 *   its codec setting "Include cross-origin credentials" is on (the UI's "pass access token" sends
 *   the UI's own sign-in token instead, and only to https endpoints). Without it: 401.
 */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

export interface CodecServerOptions {
  /** Browser origins (the Temporal UI's) that may call it. */
  allowedOrigins: string[];
  /** `Host` header values it answers to (`127.0.0.1:8888`, `localhost:8888`, …). */
  allowedHosts: string[];
  /** The credential every encode and decode must carry. */
  token: string;
}

export const CODEC_SESSION_COOKIE = 'intake_codec';

/** The codec server's token when CODEC_SERVER_TOKEN is unset: derived from SIGNING_SECRET. */
export function codecServerToken(signingSecret: string): string {
  return Buffer.from(deriveKey(signingSecret, 'codec-server-token')).toString('base64url');
}

/** The `Host` values of a server listening on host:port: loopback listeners answer to every loopback name. */
export function codecServerHosts(host: string, port: number, extra: readonly string[] = []): string[] {
  const loopback = ['127.0.0.1', 'localhost', '[::1]', '::1', '0.0.0.0', '::'].includes(host);
  const names = loopback ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  return [...names.map((name) => `${name}:${port}`), ...extra].map((h) => h.toLowerCase());
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

/** Compared as digests: constant time whatever the lengths. */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function presented(ctx: Koa.Context): string | undefined {
  const bearer = /^Bearer (\S+)$/i.exec(ctx.get('authorization'))?.[1];
  return bearer ?? ctx.cookies.get(CODEC_SESSION_COOKIE);
}

export function codecServerApp(codec: PayloadCodec, o: CodecServerOptions): Koa {
  const app = new Koa();
  const router = new Router();
  const hosts = new Set(o.allowedHosts.map((h) => h.toLowerCase()));
  const refuse = (ctx: Koa.Context, status: number, message: string) => {
    ctx.status = status;
    ctx.body = { message };
  };
  app.use(async (ctx, next) => {
    ctx.set({ 'Cache-Control': 'no-store', Vary: 'Origin' });
    // Before anything else: a rebound DNS name never gets an answer, not even a preflight.
    if (!hosts.has(ctx.get('host').toLowerCase())) return refuse(ctx, 421, `this codec server answers for ${[...hosts].join(', ')} only`);
    const origin = ctx.get('origin');
    if (origin && !o.allowedOrigins.includes(origin))
      return refuse(ctx, 403, `origin ${origin} may not call this codec server (CODEC_SERVER_CORS_ORIGINS)`);
    if (origin) {
      ctx.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Headers': 'content-type,x-namespace,authorization',
        'Access-Control-Allow-Methods': 'POST,OPTIONS',
      });
    }
    // A preflight carries no credential; the request that follows must.
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    if (ctx.path !== '/session' && !sameSecret(presented(ctx), o.token)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="intake-codec"');
      return refuse(
        ctx,
        401,
        'the codec server needs its token: Authorization: Bearer <token>, or open /session?token=<token> in this browser once',
      );
    }
    try {
      await next();
    } catch (error) {
      refuse(ctx, 400, `cannot ${ctx.path.slice(1)}: ${(error as Error).message}`);
    }
  });
  // Signs this browser in: an HttpOnly cookie for this host only, sent by the UI's fetches from the
  // same site (another port of the same host name) and by no other site.
  router.get('/session', (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : undefined;
    if (token !== undefined) {
      if (!sameSecret(token, o.token)) return refuse(ctx, 401, "not the codec server's token");
      ctx.cookies.set(CODEC_SESSION_COOKIE, o.token, {
        httpOnly: true,
        sameSite: 'strict',
        path: '/',
        overwrite: true,
        maxAge: 30 * 24 * 3600 * 1000,
      });
      // Off the address bar and out of the history's next entry.
      ctx.status = 303;
      ctx.redirect('/session');
      return;
    }
    if (!sameSecret(ctx.cookies.get(CODEC_SESSION_COOKIE), o.token))
      return refuse(ctx, 401, 'this browser is not signed in: open /session?token=<token>');
    ctx.body = {
      message:
        'this browser may use the codec server: in the Temporal UI, set the Codec Server endpoint to this address with "Include cross-origin credentials" on',
    };
  });
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '64mb' }));
  for (const op of ['encode', 'decode'] as const) {
    router.post(`/${op}`, async (ctx) => {
      const payloads = (ctx.request.body as { payloads?: JsonPayload[] } | undefined)?.payloads;
      if (!Array.isArray(payloads)) throw new Error('the body must be {payloads: [...]}');
      ctx.body = { payloads: (await codec[op](payloads.map(fromJson))).map(toJson) };
    });
  }
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
