import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** A value as COPY's text format writes it: null is \N; arrays are PostgreSQL array literals. */
export type CopyValue = string | number | bigint | boolean | null | Date | Buffer | readonly string[];

/** COPY text format: backslash, tab, newline and carriage return escaped. */
function escapeText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : value;
}
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** An array literal's element, quoted (text arrays). */
const arrayElement = (value: string) => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;

export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'string') return escapeText(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return `\\\\x${value.toString('hex')}`;
  return escapeText(`{${value.map(arrayElement).join(',')}}`);
}

/** Lines are written to the COPY stream in chunks of about this size. */
const CHUNK_CHARS = 256 * 1024;

/**
 * One table's `COPY ... FROM STDIN` on a connection of its own, in the transaction that connection
 * holds: rows are buffered and written in chunks; `full` says when the caller should wait for the
 * server (`drained`) before it makes more rows.
 */
export class CopySink {
  rows = 0;
  private buffer: string[] = [];
  private chars = 0;
  private waiting: Promise<void> | null = null;
  private readonly stream: ReturnType<typeof copyFrom>;
  /** Which of the row's values the table has a column for (all, unless `present` left some out). */
  private readonly kept: readonly boolean[] | null;

  /** `present`: the columns the table has (a database of an earlier schema lacks some): the others' values are left out. */
  constructor(
    client: pg.PoolClient | pg.Client,
    readonly table: string,
    columns: readonly string[],
    present?: ReadonlySet<string>,
  ) {
    const kept = columns.map((c) => !present || present.has(c));
    this.kept = kept.every(Boolean) ? null : kept;
    this.stream = client.query(copyFrom(`COPY ${table} (${columns.filter((_, i) => kept[i]).join(', ')}) FROM STDIN`));
  }

  add(values: readonly CopyValue[]): void {
    const row = this.kept ? values.filter((_, i) => this.kept![i]) : values;
    const line = `${row.map(copyField).join('\t')}\n`;
    this.buffer.push(line);
    this.chars += line.length;
    this.rows++;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  private flush(): void {
    if (!this.buffer.length) return;
    const chunk = this.buffer.join('');
    this.buffer = [];
    this.chars = 0;
    if (!this.stream.write(chunk) && !this.waiting) {
      this.waiting = new Promise((resolve) => this.stream.once('drain', () => resolve()));
      void this.waiting.then(() => (this.waiting = null));
    }
  }

  /** The server has not yet taken what was written: wait (`drained`) before making more rows. */
  get full(): boolean {
    return this.waiting !== null;
  }

  async drained(): Promise<void> {
    if (this.waiting) await this.waiting;
  }

  async end(): Promise<void> {
    this.flush();
    this.stream.end();
    await finished(this.stream);
  }
}
