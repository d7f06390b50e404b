import type { DatabasePool } from 'slonik';
import { EXPORT_KINDS, exportBatch, snapshotTransaction, type ExportKind } from '../db/repositories/exports.js';

/** Lines read per query. */
export const EXPORT_BATCH = 1000;

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
  o: { batch?: number } = {},
): Promise<ExportCounts> {
  return pool.transaction(async (tx) => {
    await snapshotTransaction(tx);
    await write(`${JSON.stringify({ type: 'export', version: EXPORT_VERSION, organizationId, exportedAt: new Date().toISOString() })}\n`);
    const counts = Object.fromEntries(EXPORT_KINDS.map((k) => [k, 0])) as ExportCounts;
    for (const kind of EXPORT_KINDS) {
      let after: string | null = null;
      do {
        const batch = await exportBatch(tx, kind, organizationId, after, o.batch ?? EXPORT_BATCH);
        if (batch.lines.length) await write(`${batch.lines.join('\n')}\n`);
        counts[kind] += batch.lines.length;
        after = batch.last;
      } while (after !== null);
    }
    await write(`${JSON.stringify({ type: 'end', counts })}\n`);
    return counts;
  });
}

/** A `write` into a Node stream that waits while it is full; it fails once the stream is closed (the client went away). */
export function streamWriter(stream: NodeJS.WritableStream & { destroyed?: boolean }): (chunk: string) => Promise<void> {
  return async (chunk) => {
    if (stream.destroyed) throw new Error('the export stream was closed');
    if (stream.write(chunk)) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', closed);
        resolve();
      };
      const closed = () => {
        stream.off('drain', done);
        reject(new Error('the export stream was closed'));
      };
      stream.once('drain', done);
      stream.once('close', closed);
    });
  };
}
