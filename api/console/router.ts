import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Middleware, Next } from 'koa';
import type { AppContext } from '../context.js';

/** What the built console's files are served as. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/**
 * The console's pages may load only the console's own files and call only this origin; media plays
 * from here (the signed playback URLs) or from blobs.
 */
export const CONSOLE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' blob:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
} as const;

interface ConsoleFile {
  body: Buffer;
  type: string;
  /** Vite's hashed assets never change under their name. */
  immutable: boolean;
}

/** Every file of the build, by its path under /console/: only these are served (no path from a request touches the disk). */
function readBuild(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  const walk = (sub: string) => {
    for (const name of readdirSync(path.join(dir, sub))) {
      if (name.startsWith('.')) continue; // the build's own bookkeeping (.sources-hash)
      const rel = sub ? `${sub}/${name}` : name;
      const full = path.join(dir, rel);
      if (statSync(full).isDirectory()) walk(rel);
      else
        files.set(rel, {
          body: readFileSync(full),
          type: TYPES[path.extname(name)] ?? 'application/octet-stream',
          immutable: rel.startsWith('assets/'),
        });
    }
  };
  walk('');
  return files;
}

/**
 * `/console`: the web console (issue 36), built by `npm run build` into `dir` (dist/console). Its
 * files as built; any other path without a file extension is the application's page (its router
 * reads the path). Read once, on the first request: a build made after the API started is served
 * after a restart.
 */
export function consoleRoutes(dir: string): Middleware {
  let build: Map<string, ConsoleFile> | null | undefined;
  const load = () => {
    if (build === undefined) {
      try {
        build = readBuild(dir);
        if (!build.has('index.html')) build = null;
      } catch {
        build = null;
      }
    }
    return build;
  };
  return async (ctx: AppContext, next: Next) => {
    if ((ctx.path !== '/console' && !ctx.path.startsWith('/console/')) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    if (ctx.path === '/console') {
      ctx.redirect('/console/');
      return;
    }
    const files = load();
    ctx.set(CONSOLE_HEADERS);
    if (!files) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run `npm run build` (npm start builds it when it is missing or stale).\n';
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path.slice('/console/'.length));
    } catch {
      await next();
      return;
    }
    const file = files.get(rel);
    if (file) {
      ctx.set('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      ctx.type = file.type;
      ctx.body = file.body;
      return;
    }
    // A missing asset is 404; a page of the application (no extension) is index.html.
    if (path.extname(rel)) {
      await next();
      return;
    }
    const index = files.get('index.html')!;
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = index.type;
    ctx.body = index.body;
  };
}
