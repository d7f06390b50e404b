import { loadConfig } from '../config.js';
import { migrate } from '../db/migrate.js';
import { CliContext } from './context.js';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the running dev stack's database). */
const ctx = new CliContext(loadConfig());
try {
  const result = await migrate(await ctx.sessionDatabaseUrl());
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  process.stderr.write(`migrate: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
