import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { parse } from 'yaml';
import { createApiMetrics } from '../../../src/metrics/api-metrics.js';
import { createWorkerMetrics } from '../../../src/metrics/worker-metrics.js';
import { PROJECT_ROOT } from '../../../src/paths.js';

/**
 * The Temporal SDK's metrics the dashboard and the alerts read; the entrypoint test scrapes each
 * of them from a real worker (test/integration/entrypoints.test.ts).
 */
const SDK_METRICS_USED = ['temporal_worker_task_slots_available'];

const read = (...p: string[]) => readFileSync(path.join(PROJECT_ROOT, ...p), 'utf8');

/** The metric names an expression reads (a histogram's series by their base name). */
function metricNames(expr: string): string[] {
  const names = expr.match(/\b(?:intake|temporal)_[a-z_]+\b/g) ?? [];
  return names.map((n) => n.replace(/_(bucket|count|sum)$/, ''));
}

describe('dashboard and alert rules', () => {
  let exported: Set<string>;
  before(async () => {
    // The pool gauge exists with a pool: one that reports its state is enough to name it.
    const pool = { state: () => ({ acquiredConnections: 0, idleConnections: 0, waitingClients: 0 }) } as unknown as DatabasePool;
    const api = createApiMetrics({ processMetrics: false, pool });
    const worker = createWorkerMetrics({ sdkPort: 1 });
    exported = new Set([
      ...(await api.registry.getMetricsAsJSON()).map((m) => m.name),
      ...(await worker.registry.getMetricsAsJSON()).map((m) => m.name),
      ...SDK_METRICS_USED,
    ]);
  });

  const dashboard = JSON.parse(read('deploy', 'grafana', 'dashboards', 'intake.json')) as {
    uid: string;
    panels: { type: string; title: string; targets?: { expr: string }[] }[];
  };
  const rules = (
    parse(read('deploy', 'prometheus', 'alerts.yml')) as {
      groups: { rules: { alert: string; expr: string; annotations: { runbook: string } }[] }[];
    }
  ).groups.flatMap((g) => g.rules);

  it('every dashboard query reads metrics the API and the worker export', () => {
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 12);
    for (const p of panels) {
      assert.ok(p.targets?.length, p.title);
      for (const t of p.targets) {
        const names = metricNames(t.expr);
        assert.ok(names.length, `${p.title}: ${t.expr}`);
        for (const n of names) assert.ok(exported.has(n), `${p.title}: ${n} is not exported`);
      }
    }
  });

  it('the dashboard covers ingest rate, processing lag, backlog, error rate, media and bots', () => {
    const all = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .map((t) => t.expr)
      .join('\n');
    for (const n of [
      'intake_agent_events_total',
      'intake_agent_processing_lag_seconds',
      'intake_agent_sessions_waiting',
      'status=~"5.."',
      'intake_media_ingestions_active',
      'intake_media_phase_duration_seconds_bucket',
      'intake_meeting_bots_active',
    ]) {
      assert.ok(all.includes(n), n);
    }
  });

  it('the docs picture the dashboard as it is, drawn from a benchmark run (npm run bench -- dashboard)', () => {
    const run = JSON.parse(read('bench', 'results', 'dashboard.json')) as { picture: string; panels: { title: string; points: number }[] };
    assert.deepEqual(
      run.panels.map((p) => p.title),
      dashboard.panels.filter((p) => p.type !== 'row').map((p) => p.title),
      'the picture has every panel of the dashboard: run the benchmark again',
    );
    assert.ok(
      run.panels.every((p) => p.points > 0),
      'every panel had data',
    );
    const png = readFileSync(path.join(PROJECT_ROOT, run.picture));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.match(read('docs', 'operations.md'), new RegExp(`\\]\\(${path.relative('docs', run.picture).replaceAll('.', '\\.')}\\)`));
  });

  it('every alert reads exported metrics and has its runbook section in docs/operations.md', () => {
    const ops = read('docs', 'operations.md');
    assert.ok(rules.length >= 6);
    for (const r of rules) {
      for (const n of metricNames(r.expr)) assert.ok(exported.has(n), `${r.alert}: ${n} is not exported`);
      const anchor = r.annotations.runbook.split('#')[1]!;
      assert.equal(anchor, r.alert.toLowerCase());
      assert.match(ops, new RegExp(`^#### ${r.alert}$`, 'm'), `docs/operations.md has no "#### ${r.alert}" section`);
    }
  });

  it('the compose file provisions the dashboard and the rules it ships', () => {
    const compose = read('docker-compose.yml');
    assert.match(compose, /\.\/deploy\/grafana\/dashboards:\/var\/lib\/grafana\/dashboards:ro/);
    assert.match(compose, /\.\/deploy\/prometheus\/alerts\.yml:\/etc\/prometheus\/alerts\.yml:ro/);
    assert.match(read('deploy', 'grafana', 'provisioning', 'dashboards', 'intake.yml'), /path: \/var\/lib\/grafana\/dashboards/);
  });
});
