/**
 * The agent-ingest benchmark's HTTP floor: a bare node:http server in its own process that reads
 * each request body and answers 202 with a small JSON body, doing nothing else. The same client
 * against it measures what HTTP alone costs on this machine. Prints its URL on stdout.
 */
import { createServer } from 'node:http';

const body = JSON.stringify({ sessionId: '00000000-0000-4000-8000-000000000000', acceptedEventCount: 1, deduplicatedEventCount: 0 });
const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
