import net from 'node:net';

/**
 * Ports this process handed out. The OS may give a just-closed port to the next bind, so two
 * servers asked for concurrently (the test stack's PostgreSQL and Temporal) could get the same
 * one: a port is handed out once per process (the set is forgotten past 10,000 ports).
 */
const handedOut = new Set<number>();

/** A port the OS says is free right now, not handed out before by this process (tests and the harness run on free ports). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await portTheOsGives();
    if (handedOut.has(port)) continue;
    if (handedOut.size >= 10_000) handedOut.clear();
    handedOut.add(port);
    return port;
  }
}

function portTheOsGives(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function isPortOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether this process could listen on `host:port` now (what start-up needs, on any interface). */
export async function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
