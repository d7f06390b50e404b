/**
 * The growth benchmark's headline figures (bench/growth.ts measures them; the summary and the chart,
 * bench/growth-chart.ts, show them), by their path in a size's figures.
 */
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/** The headline figures, each size's over S's (a latency or a duration: higher is worse; a rate: lower is worse). */
/**
 * `goal`: held to within 1.5x of S at L (issue 53: ingest, lag and reads). Reads are compared by
 * their median: 200 requests of 10-30 ms on two shared cores give a p99 that is the machine's noise
 * (the p99s are in the result files).
 */
/**
 * The 500-event ingest is judged against its limit measured in the same run at the same size (raw
 * `pg` 500-row inserts of the same rows): its share of that limit, `ingestBatch.shareOfRawInsert`
 * (derived: `derive`). Its events/s alone moves with the machine's state between the sizes' phases
 * as much as with the data (the limit itself ran 1.17x to 1.55x slower at M than at S in two runs).
 */
export const GROWTH_FIGURES: {
  key: string;
  label: string;
  kind: 'latency' | 'rate';
  goal?: true;
  derive?: (figures: unknown) => number | undefined;
}[] = [
  { key: 'rawInsertRowsPerSecond', label: 'raw pg 500-row inserts, rows/s (the limit)', kind: 'rate' },
  { key: 'ingestSingle.latencyMs.p99', goal: true, label: 'single-event ingest p99', kind: 'latency' },
  { key: 'ingestSingle.requestsPerSecond', goal: true, label: 'single-event ingest, requests/s', kind: 'rate' },
  { key: 'ingestBatch.eventsPerSecond', label: '500-event ingest, events/s', kind: 'rate' },
  {
    key: 'ingestBatch.shareOfRawInsert',
    goal: true,
    label: '500-event ingest, share of raw inserts',
    kind: 'rate',
    derive: (figures) => {
      const ingest = valueAt(figures, 'ingestBatch.eventsPerSecond');
      const raw = valueAt(figures, 'rawInsertRowsPerSecond');
      return ingest !== undefined && raw ? ingest / raw : undefined;
    },
  },
  { key: 'processingLagMs.p95', goal: true, label: 'processing lag p95', kind: 'latency' },
  { key: 'reads.session.p50', goal: true, label: 'session read p50', kind: 'latency' },
  { key: 'reads.sessionsFirstPage.p50', goal: true, label: 'sessions list p50', kind: 'latency' },
  { key: 'reads.sessionsPage5.p50', goal: true, label: 'sessions list page 5 p50', kind: 'latency' },
  { key: 'reads.sessionsSyncFirstPage.p50', goal: true, label: 'sessions sync first page p50', kind: 'latency' },
  { key: 'reads.sessionsSyncPage5.p50', goal: true, label: 'sessions sync page 5 p50', kind: 'latency' },
  { key: 'reads.signalsFirstPage.p50', goal: true, label: 'signals list p50', kind: 'latency' },
  { key: 'reads.signalsSyncPage5.p50', goal: true, label: 'signals sync page 5 p50', kind: 'latency' },
  { key: 'reads.recordingsFiltered.p50', goal: true, label: 'recordings list, recorded-at range p50', kind: 'latency' },
  { key: 'reads.recordingsPage5.p50', goal: true, label: 'recordings list page 5 p50', kind: 'latency' },
  { key: 'reads.transcript.p50', goal: true, label: 'transcript read p50', kind: 'latency' },
  { key: 'export.reader.seconds', label: 'export of the reader organization', kind: 'latency' },
  { key: 'export.largestOfS.seconds', label: "export of S's largest organization", kind: 'latency' },
  { key: 'erasure.seconds', label: 'person erasure', kind: 'latency' },
  { key: 'retentionSweep.seconds', label: 'retention sweep of 100 sessions', kind: 'latency' },
];

/** A number in a result's figures, by its dotted path (`-1` is an array's last item); undefined where there is none. */
export function valueAt(figures: unknown, key: string): number | undefined {
  let value: unknown = figures;
  for (const part of key.split('.')) {
    if (Array.isArray(value)) value = value.at(Number(part));
    else value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  return typeof value === 'number' ? value : undefined;
}

export function ratiosToS(bySize: Record<string, Record<string, unknown>>): Record<string, Record<string, number>> {
  const base = bySize.S;
  const out: Record<string, Record<string, number>> = {};
  for (const [size, figures] of Object.entries(bySize)) {
    if (size === 'S' || !base) continue;
    out[size] = {};
    for (const h of GROWTH_FIGURES) {
      const a = h.derive ? h.derive(figures) : valueAt(figures, h.key);
      const b = h.derive ? h.derive(base) : valueAt(base, h.key);
      // Worse-than-S as a number above 1 for both kinds.
      if (a !== undefined && b) out[size][h.key] = round(h.kind === 'latency' ? a / b : b / a, 3);
    }
  }
  return out;
}
