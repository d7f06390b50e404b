import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the web console into dist/console with Vite (`npm run build` always; `npm start` and the
 * browser test with `--if-stale`: only when its sources, the API's generated types or the lockfile
 * changed since the last build, a hash of them kept beside the build).
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const out = path.join(root, 'dist', 'console');
const stamp = path.join(out, '.sources-hash');

function sourcesHash(): string {
  const hash = createHash('sha256');
  const add = (file: string) => hash.update(file).update(readFileSync(file));
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else add(full);
    }
  };
  walk(path.join(here, 'src'));
  for (const f of ['index.html', 'vite.config.ts']) add(path.join(here, f));
  add(path.join(root, 'clients', 'typescript', 'src', 'client.ts'));
  add(path.join(root, 'package-lock.json'));
  return hash.digest('hex');
}

export async function buildConsole(o: { ifStale?: boolean } = {}): Promise<'built' | 'fresh' | 'no-vite'> {
  const hash = sourcesHash();
  if (o.ifStale && existsSync(path.join(out, 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return 'fresh';
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch (error) {
    // An install without dev dependencies (`npm ci --omit=dev`) runs `prepare` too: it serves the build it has.
    if (o.ifStale) return 'no-vite';
    throw error;
  }
  const { build } = vite;
  await build({ configFile: path.join(here, 'vite.config.ts'), logLevel: 'warn' });
  writeFileSync(stamp, hash);
  return 'built';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const result = await buildConsole({ ifStale: process.argv.includes('--if-stale') });
  process.stdout.write(
    result === 'built'
      ? `console built into dist/console in ${Math.round(performance.now() - started)} ms\n`
      : 'console build is up to date\n',
  );
}
