import { Counter, Histogram, type Registry } from 'prom-client';
import type { AnalysisResult } from '../../workflows/agent-session/contract.js';

/**
 * What the worker's activities count, beside the SDK's own per-activity metrics: analyses run and
 * held (by the workflow's activities and the session drainer alike), and the media pipeline's
 * phases with their durations. Tests and tools that build activities without it count nothing.
 */
export interface ActivityMetrics {
  /** One round of queued analyses over some sessions. */
  analysisRound(results: Iterable<AnalysisResult>): void;
  /** Events the session drainer processed in this process (a share of the shards' work). */
  eventsDrained(events: number): void;
  /** One run of a media phase's activity (retries are runs too). */
  mediaPhase(phase: MediaPhase, seconds: number, outcome: 'completed' | 'failed'): void;
  /** An ingestion that ended: published, or failed with its errorCode. */
  mediaEnded(result: 'ready' | 'failed', errorCode: string | null): void;
}

export type MediaPhase = 'transfer' | 'encode' | 'finalize' | 'transcribe';

/** The media activities, by the phase each runs. */
export const MEDIA_PHASE_OF_ACTIVITY: Readonly<Record<string, MediaPhase>> = {
  transferUrlMedia: 'transfer',
  encodeMedia: 'encode',
  finalizeMedia: 'finalize',
  transcribeMedia: 'transcribe',
};

/** Seconds: from a quick finalize to a six-hour encode. */
const PHASE_BUCKETS = [0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600, 21600];

export function createActivityMetrics(registry: Registry): ActivityMetrics {
  const registers = [registry];
  const analyses = new Counter({
    name: 'intake_agent_analyses_total',
    help: 'Analyses of assistant responses run, by outcome (analysed: signals written and credits spent; failed: given up).',
    labelNames: ['outcome'],
    registers,
  });
  const held = new Counter({
    name: 'intake_agent_analysis_rounds_held_total',
    help: 'Sessions whose analysis round stopped with analyses left: the organization has no credits (billing_blocked) or the signal extractor is down (provider_unavailable).',
    labelNames: ['reason'],
    registers,
  });
  const phases = new Histogram({
    name: 'intake_media_phase_duration_seconds',
    help: 'Duration of one run of a media phase (transfer, encode, finalize, transcribe), by outcome.',
    labelNames: ['phase', 'outcome'],
    buckets: PHASE_BUCKETS,
    registers,
  });
  const ended = new Counter({
    name: 'intake_media_ingestions_ended_total',
    help: 'Media ingestions that ended, by result (ready, failed) and errorCode.',
    labelNames: ['result', 'error_code'],
    registers,
  });
  const drained = new Counter({
    name: 'intake_agent_events_drained_total',
    help: "Agent events processed by this worker's session drainer runs (each worker's share of the task queue's shards).",
    registers,
  });
  for (const outcome of ['analysed', 'failed']) analyses.inc({ outcome }, 0);
  for (const reason of ['billing_blocked', 'provider_unavailable']) held.inc({ reason }, 0);
  return {
    analysisRound(results) {
      for (const r of results) {
        if (r.analysed) analyses.inc({ outcome: 'analysed' }, r.analysed);
        if (r.failed) analyses.inc({ outcome: 'failed' }, r.failed);
        if (r.deleted) continue;
        if (r.billingBlocked) held.inc({ reason: 'billing_blocked' });
        if (r.providerUnavailable) held.inc({ reason: 'provider_unavailable' });
      }
    },
    eventsDrained(events) {
      if (events > 0) drained.inc(events);
    },
    mediaPhase(phase, seconds, outcome) {
      phases.observe({ phase, outcome }, seconds);
    },
    mediaEnded(result, errorCode) {
      ended.inc({ result, error_code: errorCode ?? '' });
    },
  };
}
