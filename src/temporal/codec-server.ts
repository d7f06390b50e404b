import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Payload, PayloadCodec } from '@temporalio/common';
import Koa from 'koa';

/**
 * A codec server for the Temporal UI and CLI (Temporal's remote codec protocol): `POST /decode`
 * and `POST /encode` take and give `{payloads: [{metadata: {k: base64}, data: base64}]}`. Operators
 * who hold the payload keys run it beside their browser (`npm run codec-server`) and set its URL in
 * the UI's "Codec Server" settings: the UI then shows decoded inputs and results, the server's
 * history keeps only ciphertext. Only the listed origins may call it from a browser.
 */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export function codecServerApp(codec: PayloadCodec, o: { allowedOrigins: string[] }): Koa {
  const app = new Koa();
  const router = new Router();
  app.use(async (ctx, next) => {
    const origin = ctx.get('origin');
    if (origin && o.allowedOrigins.includes(origin)) {
      ctx.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Headers': 'content-type,x-namespace,authorization',
        'Access-Control-Allow-Methods': 'POST,OPTIONS',
        Vary: 'Origin',
      });
    }
    if (ctx.method === 'OPTIONS') {
      ctx.status = origin && o.allowedOrigins.includes(origin) ? 204 : 403;
      return;
    }
    try {
      await next();
    } catch (error) {
      ctx.status = 400;
      ctx.body = { message: `cannot ${ctx.path.slice(1)}: ${(error as Error).message}` };
    }
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
