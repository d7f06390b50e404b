import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the script node was started with.
 * Compared as real paths: `import.meta.url === \`file://${process.argv[1]}\`` is false when the
 * script is reached through a symbolic link or its path has a space or other character a URL
 * encodes, and the script then silently did nothing (issue 51: the CLI exited 0 with no output).
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const started = process.argv[1];
  if (!started) return false;
  try {
    return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(path.resolve(started));
  } catch {
    return false;
  }
}
