import type { DatabasePool } from 'slonik';
import { EXPORT_KINDS, exportBatch, lockOrganizationExport, snapshotTransaction, type ExportKind } from '../db/repositories/exports.js';
import { AppError } from '../errors.js';

/** Lines read per query; recordings (each with its whole transcript) fewer. */
export const EXPORT_BATCH = 1000;
const BATCH_OF: Partial<Record<ExportKind, number>> = { recording: 50 };

/** The most bytes one write hands the response: a batch is written in pieces of about this size, each after the last drained. */
export const EXPORT_CHUNK_BYTES = 64 * 1024;

export const EXPORT_VERSION = 1;

/** What the export wrote, per line type (the `end` line says the same). */
export type ExportCounts = Record<ExportKind, number>;

/**
 * Writes an organization's data as NDJSON (issue 32, point 3): an `export` line, then feedback
 * sources, people, feedback records, recordings (with participants, transcript, folders and
 * metadata), agent sessions (with participants), their events and signals, then an `end` line with
 * the counts. One read-only REPEATABLE READ transaction: the export is one consistent snapshot. It
 * reads a batch at a time and waits for `write` (backpressure) before it reads on, so memory stays
 * flat. A stream cut short has no `end` line: an import refuses it.
 */
export async function exportOrganization(
  pool: DatabasePool,
  organizationId: string,
  write: (chunk: string) => Promise<void>,
  o: { batch?: number; started?: () => void } = {},
): Promise<ExportCounts> {
  return pool.transaction(async (tx) => {
    await snapshotTransaction(tx);
    // One export of an organization at a time, on every replica (until this transaction ends).
    if (!(await lockOrganizationExport(tx, organizationId)))
      throw new AppError('too_many_exports', {
        message: 'An export of this organization is already running: retry once it has finished.',
        headers: { 'Retry-After': '30' },
      });
    o.started?.();
    await write(`${JSON.stringify({ type: 'export', version: EXPORT_VERSION, organizationId, exportedAt: new Date().toISOString() })}\n`);
    const counts = Object.fromEntries(EXPORT_KINDS.map((k) => [k, 0])) as ExportCounts;
    for (const kind of EXPORT_KINDS) {
      let after: string | null = null;
      do {
        const batch = await exportBatch(tx, kind, organizationId, after, o.batch ?? BATCH_OF[kind] ?? EXPORT_BATCH);
        for (const chunk of chunksOf(batch.lines)) await write(chunk);
        counts[kind] += batch.lines.length;
        after = batch.last;
      } while (after !== null);
    }
    await write(`${JSON.stringify({ type: 'end', counts })}\n`);
    return counts;
  });
}

/** Lines as NDJSON text in pieces of about EXPORT_CHUNK_BYTES (a longer line is a piece of its own). */
function* chunksOf(lines: readonly string[]): Generator<string> {
  let piece: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (size > 0 && size + line.length > EXPORT_CHUNK_BYTES) {
      yield `${piece.join('\n')}\n`;
      piece = [];
      size = 0;
    }
    piece.push(line);
    size += line.length + 1;
  }
  if (piece.length) yield `${piece.join('\n')}\n`;
}

/** The client stopped reading for longer than the stall timeout. */
export class ExportStalledError extends Error {}

/**
 * A `write` into a Node stream that waits while it is full; it fails once the stream is closed (the
 * client went away) or when it stays full for `stallMs` (a client that stopped reading: the export
 * ends and its transaction with it, instead of holding both while nobody reads).
 */
export function streamWriter(
  stream: NodeJS.WritableStream & { destroyed?: boolean },
  o: { stallMs?: number } = {},
): (chunk: string) => Promise<void> {
  return async (chunk) => {
    if (stream.destroyed) throw new Error('the export stream was closed');
    if (stream.write(chunk)) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        stream.off('drain', drained);
        stream.off('close', closed);
        if (error) reject(error);
        else resolve();
      };
      const drained = () => settle();
      const closed = () => settle(new Error('the export stream was closed'));
      const timer = o.stallMs
        ? setTimeout(() => settle(new ExportStalledError(`the client read nothing for ${o.stallMs} ms`)), o.stallMs)
        : undefined;
      stream.once('drain', drained);
      stream.once('close', closed);
    });
  };
}

/** Exports running in this process: past `max`, the next is refused (each holds a database connection while it runs). */
export function exportSlots(max: number): { take(): () => void; running(): number } {
  let running = 0;
  return {
    take() {
      if (running >= max)
        throw new AppError('too_many_exports', {
          message: `${max} exports are running on this server: retry in a minute.`,
          headers: { 'Retry-After': '60' },
        });
      running += 1;
      let released = false;
      return () => {
        if (!released) running -= 1;
        released = true;
      };
    },
    running: () => running,
  };
}
