/**
 * The uploads benchmark's HTTP floor: a bare tus endpoint in its own process (node:http, no
 * framework, no tus library, no lock, no database) that answers HEAD with the file's size and
 * appends each PATCH body to one file at its offset. The same client against it measures what HTTP
 * and the client alone cost on this machine. Usage: node --import tsx bench/tus-floor-server.ts <dir>;
 * prints its URL on stdout. Each path, `/<name>-<declared bytes>`, is its own file under <dir>.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.argv[2] ?? '.';
const sizeOf = async (file: string) => (await stat(file).catch(() => ({ size: 0 }))).size;
const server = createServer((req, res) => {
  const file = path.join(dir, path.basename(req.url ?? 'upload'));
  // The declared size is the path's last `-` part: `/<name>-<bytes>`.
  const length =
    path
      .basename(req.url ?? '')
      .split('-')
      .at(-1) ?? '0';
  void (async () => {
    if (req.method === 'HEAD') {
      res.writeHead(200, {
        'Upload-Offset': await sizeOf(file),
        'Upload-Length': length,
        'Tus-Resumable': '1.0.0',
        'Cache-Control': 'no-store',
      });
      res.end();
      return;
    }
    const offset = Number(req.headers['upload-offset'] ?? 0);
    await pipeline(req, createWriteStream(file, { flags: offset ? 'r+' : 'w', start: offset }));
    res.writeHead(204, { 'Upload-Offset': await sizeOf(file), 'Tus-Resumable': '1.0.0' });
    res.end();
  })().catch((error: unknown) => {
    res.writeHead(500).end(String(error));
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
