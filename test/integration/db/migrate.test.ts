import { strict as assert } from 'node:assert';
import { mkdtemp, writeFile, copyFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, NO_TRANSACTION_MARKER, readMigrations } from '../../../src/db/migrate.js';
import { MIGRATIONS_DIR } from '../../../src/paths.js';
import { appliedMigrations, createEmptyDatabase } from '../../../harness/stack.js';

describe('migration runner', () => {
  it('applies every file once; a second run is a no-op', async () => {
    const url = await createEmptyDatabase();
    const files = await readMigrations();
    const first = await migrate(url);
    assert.deepEqual(first, { applied: files.map((f) => f.name), alreadyApplied: 0 });
    const second = await migrate(url);
    assert.deepEqual(second, { applied: [], alreadyApplied: files.length });
    assert.deepEqual(
      await appliedMigrations(url),
      files.map((f) => f.name),
    );
  });

  it('serializes concurrent runners: each file is applied by exactly one of them', async () => {
    const url = await createEmptyDatabase();
    const results = await Promise.all([migrate(url), migrate(url), migrate(url), migrate(url)]);
    const files = await readMigrations();
    const appliedBy = results.flatMap((r) => r.applied);
    assert.deepEqual(appliedBy.sort(), files.map((f) => f.name).sort());
    assert.equal(results.filter((r) => r.applied.length > 0).length, 1);
    assert.equal((await appliedMigrations(url)).length, files.length);
  });

  it('rolls a failing file back completely and refuses an edited, already applied file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-'));
    for (const name of await readdir(MIGRATIONS_DIR)) await copyFile(path.join(MIGRATIONS_DIR, name), path.join(dir, name));
    await writeFile(path.join(dir, '9000_broken.sql'), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;');
    const url = await createEmptyDatabase();
    await assert.rejects(migrate(url, dir), /Migration 9000_broken\.sql failed: relation "no_such_table" does not exist/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const leftover = await client.query("SELECT to_regclass('half_done') AS t");
    await client.end();
    assert.equal(leftover.rows[0].t, null, 'the failed file left nothing behind');

    await writeFile(path.join(dir, '9000_broken.sql'), 'CREATE TABLE half_done (id int);');
    await migrate(url, dir);
    await writeFile(path.join(dir, '9000_broken.sql'), 'CREATE TABLE half_done (id bigint);');
    await assert.rejects(migrate(url, dir), /9000_broken\.sql changed after it was applied/);
  });

  it('builds a no-transaction file’s indexes CONCURRENTLY, rebuilds one an interrupted run left invalid, and refuses other statements there', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-'));
    for (const name of await readdir(MIGRATIONS_DIR)) await copyFile(path.join(MIGRATIONS_DIR, name), path.join(dir, name));
    const url = await createEmptyDatabase();
    await migrate(url, dir);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // What a killed CREATE INDEX CONCURRENTLY leaves: an index marked invalid (made so here by a build that fails).
      await client.query('CREATE TABLE concurrent_t (id int, v int)');
      await client.query('INSERT INTO concurrent_t VALUES (1, 1), (2, 1)');
      await assert.rejects(
        client.query('CREATE UNIQUE INDEX CONCURRENTLY concurrent_t_v_idx ON concurrent_t (v)'),
        /could not create unique index/,
      );
      const valid = async (name: string) =>
        (await client.query<{ valid: boolean }>('SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)', [name]))
          .rows[0]?.valid;
      assert.equal(await valid('concurrent_t_v_idx'), false);
      await client.query('UPDATE concurrent_t SET v = id');

      await writeFile(
        path.join(dir, '9001_concurrent.sql'),
        `${NO_TRANSACTION_MARKER}\n-- a comment; with a semicolon\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS concurrent_t_v_idx ON concurrent_t (v);\n` +
          'CREATE INDEX CONCURRENTLY IF NOT EXISTS concurrent_t_id_idx\n  ON concurrent_t (id, v);\n',
      );
      assert.deepEqual(await migrate(url, dir), {
        applied: ['9001_concurrent.sql'],
        alreadyApplied: (await readdir(MIGRATIONS_DIR)).length,
      });
      assert.equal(await valid('concurrent_t_v_idx'), true, 'the invalid index was dropped and built again');
      assert.equal(await valid('concurrent_t_id_idx'), true);
      assert.deepEqual((await migrate(url, dir)).applied, []);

      await writeFile(path.join(dir, '9002_mixed.sql'), `${NO_TRANSACTION_MARKER}\nALTER TABLE concurrent_t ADD COLUMN w int;\n`);
      await assert.rejects(
        migrate(url, dir),
        /9002_mixed\.sql: a no-transaction file holds only CREATE INDEX CONCURRENTLY IF NOT EXISTS statements/,
      );
      const column = await client.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'concurrent_t' AND column_name = 'w'");
      assert.equal(column.rowCount, 0, 'nothing of the refused file ran');
    } finally {
      await client.end();
    }
  });
});
