import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts a test's own HTTP server on a free loopback port; resolves to that port. */
export async function listenLocal(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes a test's HTTP server, keep-alive connections included (a server never started is fine). */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server?.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
