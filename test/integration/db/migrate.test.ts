import { strict as assert } from 'node:assert';
import { mkdtemp, writeFile, copyFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, readMigrations } from '../../../src/db/migrate.js';
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
});
