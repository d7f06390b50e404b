import { CliError } from './context.js';

/** More than any password the policy accepts (256 characters of up to 4 bytes), and a bound on what is read. */
const MAX_BYTES = 4096;

/**
 * `--password-stdin`: the password is standard input (a pipe, a file, or typed and ended with
 * Ctrl-D), never an argument that `ps` and shell history would keep. One trailing newline is not
 * part of it.
 */
export async function readPasswordFromStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += b.length;
    if (size > MAX_BYTES) throw new CliError(`the password on standard input is longer than ${MAX_BYTES} bytes`, 2);
    chunks.push(b);
  }
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!password) throw new CliError('--password-stdin: standard input is empty', 2);
  return password;
}
