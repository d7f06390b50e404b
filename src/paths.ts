import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file whether it runs from source (tsx) or from dist/. */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'migrations')) || !existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('Cannot find the Intake project root (a folder with package.json and migrations/)');
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findRoot();
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
/** Where `npm run build` puts the web console (console/vite.config.ts), which the API serves at /console. */
export const CONSOLE_BUILD_DIR = path.join(PROJECT_ROOT, 'dist', 'console');

/** Workflow sources: TypeScript in development, compiled JavaScript under dist/ in production. */
export function workflowsEntry(): string {
  const ts = path.join(PROJECT_ROOT, 'workflows', 'index.ts');
  return existsSync(ts) ? ts : path.join(PROJECT_ROOT, 'dist', 'workflows', 'index.js');
}

/** The failure converter module (`failureConverterPath`): TypeScript in development, JavaScript under dist/. */
export function failureConverterModule(): string {
  const ts = path.join(PROJECT_ROOT, 'src', 'temporal', 'failure-converter.ts');
  return existsSync(ts) ? ts : path.join(PROJECT_ROOT, 'dist', 'src', 'temporal', 'failure-converter.js');
}

export function resolveFromRoot(p: string): string {
  return path.isAbsolute(p) ? p : path.join(PROJECT_ROOT, p);
}

let version: string | undefined;

/** The version in package.json (`service.version` of the process's traces). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
