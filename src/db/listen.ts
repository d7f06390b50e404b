import pg from 'pg';

export interface ChannelListener {
  close(): Promise<void>;
}

/**
 * LISTENs on a PostgreSQL channel over a connection of its own (never a pooled one: the pool's
 * connections are shared), calling `onNotification` with each payload. A lost connection is
 * opened again a second later and `onConnect` called once it listens again, so that a caller can
 * look for what it may have missed meanwhile. Resolves once the first connection listens.
 */
export async function listenChannel(o: {
  databaseUrl: string;
  channel: string;
  onNotification: (payload: string) => void;
  onConnect?: () => void;
  log?: { warn(meta: object, message: string): void };
}): Promise<ChannelListener> {
  const { channel, onNotification, ...rest } = o;
  return listenChannels({ ...rest, channels: { [channel]: onNotification } });
}

/** listenChannel for several channels over one connection: each notification goes to its channel's handler. */
export async function listenChannels(o: {
  databaseUrl: string;
  channels: Record<string, (payload: string) => void>;
  onConnect?: () => void;
  log?: { warn(meta: object, message: string): void };
}): Promise<ChannelListener> {
  let closed = false;
  let client: pg.Client | undefined;
  const names = Object.keys(o.channels);
  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client({ connectionString: o.databaseUrl, application_name: `intake listen ${names.join(' ')}`.slice(0, 63) });
    c.on('notification', (n) => o.channels[n.channel]?.(n.payload ?? ''));
    c.on('error', (err) => {
      o.log?.warn({ err, channels: names }, 'a notification listener lost its connection; opening it again');
      void c.end().catch(() => undefined);
      if (client === c) client = undefined;
      setTimeout(() => void connect().catch(() => undefined), 1000).unref();
    });
    await c.connect();
    for (const name of names) await c.query(`LISTEN ${pg.escapeIdentifier(name)}`);
    if (closed) return void (await c.end());
    client = c;
    o.onConnect?.();
  };
  await connect();
  return {
    async close() {
      closed = true;
      await client?.end();
    },
  };
}
