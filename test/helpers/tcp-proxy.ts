import net from 'node:net';

/**
 * A TCP proxy the test can cut and restore, to make PostgreSQL or Temporal "go down" for the code
 * under test without stopping the shared servers.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly clients = new Set<net.Socket>();
  private stalled = false;

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const probe = net.createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const proxy = new TcpProxy(port, targetPort);
    await proxy.up();
    return proxy;
  }

  /** Listens again (nothing to do when it listens already). */
  async up(): Promise<void> {
    if (this.server?.listening) return;
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      this.clients.add(client);
      client.on('close', () => this.clients.delete(client));
      client.pipe(upstream).pipe(client);
      if (this.stalled) client.pause();
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** A server that stops answering: what clients send is held (connections stay open) until `flow()`. */
  stall(): void {
    this.stalled = true;
    for (const c of this.clients) c.pause();
  }

  flow(): void {
    this.stalled = false;
    for (const c of this.clients) c.resume();
  }

  /** Refuses new connections and cuts every open one. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
