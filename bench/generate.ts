/**
 * `npm run bench:generate -- --size S|M|L [--seed N]`: fills the migrated, idle database at
 * DATABASE_URL (a superuser's connection) with a named size of generated data (bench/data-generator.ts).
 * A run adds to what is there: run it once per size wanted, with another seed for more.
 */
import { parseArgs } from 'node:util';
import { databaseSize, generateData, isSizeName, SIZES } from './data-generator.js';

const { values } = parseArgs({ options: { size: { type: 'string', default: 'S' }, seed: { type: 'string', default: '1' } } });
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL must name the database to fill');
if (!isSizeName(values.size)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const started = performance.now();
const { counts } = await generateData(url, {
  ...SIZES[values.size],
  seed: Number(values.seed),
  progress: (m) => process.stderr.write(`[generate] ${new Date().toISOString()} ${m}\n`),
});
const seconds = (performance.now() - started) / 1000;
const rows = Object.values(counts).reduce((a, b) => a + b, 0);
process.stdout.write(
  `${JSON.stringify({ size: values.size, seconds: Number(seconds.toFixed(1)), rowsPerSecond: Math.round(rows / seconds), counts, database: await databaseSize(url) }, null, 2)}\n`,
);
