import { MemoryLocker } from '@tus/server';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';
import pg from 'pg';

/** The tus lock of every API replica: one upload's HEAD and PATCH requests run one at a time, whichever replica takes them. */
export interface UploadLocker extends Locker {
  close(): Promise<void>;
}

/** A waiting request asks the holder to release on this channel (payload: the upload id). */
const RELEASE_CHANNEL = 'intake_upload_lock_release';
const RETRY_MS = 50;

/**
 * tus locks as PostgreSQL session advisory locks, shared by every API replica (the `@tus/server`
 * Locker interface; its MemoryLocker holds locks in one process only). A lock holds one connection
 * of a small pool of its own while the request runs. A request that finds the upload locked asks
 * the holder to release it (NOTIFY; each replica LISTENs and calls the holder's `requestRelease`,
 * which ends the holder's request as tus wants), then tries again until `acquireTimeoutMs`. A
 * replica that dies releases its locks with its connections.
 */
export class PostgresUploadLocker implements UploadLocker {
  readonly pool: pg.Pool;
  /** Release callbacks of the locks this process holds, by upload id. */
  readonly holders = new Map<string, RequestRelease>();
  private listener: Promise<pg.Client> | undefined;

  constructor(
    databaseUrl: string,
    readonly o: { acquireTimeoutMs?: number; maxLocks?: number } = {},
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: o.maxLocks ?? 50, idleTimeoutMillis: 10_000 });
    this.pool.on('error', () => undefined); // an idle connection lost: the next lock takes another
  }

  newLock(id: string): Lock {
    return new PostgresUploadLock(this, id);
  }

  /** The LISTEN connection, made on the first lock (most replicas' tests never take one). */
  listening(): Promise<pg.Client> {
    this.listener ??= (async () => {
      const client = new pg.Client({ connectionString: this.pool.options.connectionString });
      client.on('error', () => {
        // Lost: the next lock listens again on a new connection.
        this.listener = undefined;
      });
      client.on('notification', (n) => {
        if (n.channel === RELEASE_CHANNEL && n.payload) void this.holders.get(n.payload)?.();
      });
      await client.connect();
      await client.query(`LISTEN ${RELEASE_CHANNEL}`);
      return client;
    })();
    this.listener.catch(() => (this.listener = undefined));
    return this.listener;
  }

  async close(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await (await listener?.catch(() => undefined))?.end().catch(() => undefined);
    await this.pool.end();
  }
}

class PostgresUploadLock implements Lock {
  private client: pg.PoolClient | undefined;

  constructor(
    private readonly locker: PostgresUploadLocker,
    private readonly id: string,
  ) {}

  async lock(stop: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    await this.locker.listening();
    const deadline = Date.now() + (this.locker.o.acquireTimeoutMs ?? 30_000);
    const client = await this.locker.pool.connect();
    try {
      for (;;) {
        const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key(this.id)]);
        if (rows[0]?.ok) {
          this.client = client;
          this.locker.holders.set(this.id, requestRelease);
          return;
        }
        // tus answers its own error objects ({ status_code, body }), as its MemoryLocker throws them.
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        if (stop.aborted || Date.now() >= deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
        // Whoever holds it, on any replica, is asked to let go.
        await client.query('SELECT pg_notify($1, $2)', [RELEASE_CHANNEL, this.id]);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    } catch (error) {
      client.release();
      throw error;
    }
  }

  async unlock(): Promise<void> {
    const client = this.client;
    if (!client) throw new Error('Releasing an unlocked lock!');
    this.client = undefined;
    this.locker.holders.delete(this.id);
    try {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key(this.id)]);
      client.release();
    } catch (error) {
      // The connection is suspect: closing it releases the lock anyway.
      client.release(error instanceof Error ? error : true);
    }
  }
}

function key(uploadId: string): string {
  return `intake-upload:${uploadId}`;
}

/** One process (tests without a database URL): tus's own in-memory locker. */
export function memoryUploadLocker(): UploadLocker {
  const locker = new MemoryLocker();
  return { newLock: (id) => locker.newLock(id), close: async () => undefined };
}
