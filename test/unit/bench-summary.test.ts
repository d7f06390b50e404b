import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR } from '../../bench/results-file.js';
import { readResults, SUMMARY_END, SUMMARY_FILE, SUMMARY_START, summaryTable, withSummary } from '../../bench/summary.js';
import { GROWTH_CHART_FILE, growthChartSvg, largestGrowthResult } from '../../bench/growth-chart.js';

describe('benchmark results and their summary', () => {
  it('every result file has one shape: benchmark (its name), measuredAt, the figures, commit, machine, postgres', () => {
    const files = readdirSync(RESULTS_DIR).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 10);
    for (const file of files) {
      const result = JSON.parse(readFileSync(path.join(RESULTS_DIR, file), 'utf8')) as Record<string, unknown>;
      const keys = Object.keys(result);
      assert.equal(result.benchmark, file.replace(/\.json$/, ''), file);
      assert.deepEqual(keys.slice(0, 2), ['benchmark', 'measuredAt'], file);
      assert.deepEqual(keys.slice(-3), ['commit', 'machine', 'postgres'], file);
      assert.ok(!keys.includes('name'), `${file}: one key style (benchmark, not name)`);
      assert.match(String(result.measuredAt), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, file);
      const commit = result.commit as { sha: string; dirty: unknown };
      assert.match(commit.sha, /^[0-9a-f]{40}$/, file);
      assert.ok(commit.dirty === null || typeof commit.dirty === 'boolean', file);
      assert.deepEqual(Object.keys(result.machine as object), ['hostname', 'cpus', 'cpuModel', 'memoryGiB', 'node', 'platform'], file);
      // What the run did not record is null, and the file says where the rest came from.
      const unrecorded = commit.dirty === null || result.postgres === null || (result.machine as { hostname: unknown }).hostname === null;
      if (unrecorded) assert.equal(typeof result.provenance, 'string', `${file}: provenance says what was not recorded`);
    }
  });

  it("docs/benchmarks.md's summary table is what npm run bench:summary generates from bench/results", () => {
    const markdown = readFileSync(SUMMARY_FILE, 'utf8');
    assert.ok(markdown.includes(SUMMARY_START) && markdown.includes(SUMMARY_END), 'the summary markers');
    assert.equal(markdown, withSummary(markdown, summaryTable(readResults())), 'stale: run npm run bench:summary');
  });

  it('docs/images/growth.svg is the chart npm run bench:summary renders from the largest growth result', async () => {
    const growth = largestGrowthResult(readResults());
    assert.ok(growth, 'a growth result (npm run bench -- growth --size M)');
    assert.match(growth.benchmark, /^growth-[ML]$/, 'the chart compares a larger size with S');
    const svg = await growthChartSvg(growth);
    assert.match(svg, /^<svg /);
    assert.equal(readFileSync(GROWTH_CHART_FILE, 'utf8'), svg, 'stale: run npm run bench:summary');
  });

  it('the summary fails on a benchmark without a headline rather than leaving it out', () => {
    const [first] = readResults();
    assert.throws(() => summaryTable([{ ...first!, benchmark: 'unknown-benchmark' }]), /no headline for unknown-benchmark/);
  });
});
