/**
 * The growth chart of docs/benchmarks.md (docs/images/growth.svg): each headline figure of the
 * largest growth run (bench/results/growth-<size>.json) at each size over the same figure at S,
 * worse than S above 1, with the goal (1.5) drawn. Rendered with Vega-Lite, headless (no canvas:
 * Vega's own text-width estimate, so the same results give the same file). `npm run bench:summary`
 * writes it beside the summary table.
 */
import path from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { PROJECT_ROOT } from '../src/paths.js';
import { GROWTH_FIGURES, ratiosToS } from './growth-figures.js';
import type { BenchResult } from './results-file.js';

export const GROWTH_CHART_FILE = path.join(PROJECT_ROOT, 'docs', 'images', 'growth.svg');
const SIZE_ORDER = ['S', 'M', 'L'];

/** The growth result to chart: the one of the largest size. */
export function largestGrowthResult(results: readonly BenchResult[]): BenchResult | undefined {
  return results
    .filter((r) => /^growth-[SML]$/.test(r.benchmark))
    .sort((a, b) => SIZE_ORDER.indexOf(b.benchmark.slice(-1)) - SIZE_ORDER.indexOf(a.benchmark.slice(-1)))[0];
}

export async function growthChartSvg(result: BenchResult): Promise<string> {
  const ratios = ratiosToS((result as unknown as { bySize: Record<string, Record<string, unknown>> }).bySize);
  const values = Object.entries(ratios).flatMap(([size, byKey]) =>
    GROWTH_FIGURES.filter((h) => byKey[h.key] !== undefined).map((h) => ({ figure: h.label, size, ratio: byKey[h.key]! })),
  );
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Each figure over the same figure at S (1M events): worse above 1, goal at most 1.5 (${result.commit.sha.slice(0, 7)})`,
    },
    width: 460,
    background: 'white',
    layer: [
      {
        data: { values },
        mark: { type: 'bar' },
        encoding: {
          y: { field: 'figure', type: 'nominal', sort: null, title: null, axis: { labelLimit: 320 } },
          yOffset: { field: 'size', sort: SIZE_ORDER },
          x: { field: 'ratio', type: 'quantitative', title: 'over S', scale: { domainMin: 0 } },
          color: { field: 'size', type: 'nominal', sort: SIZE_ORDER, title: 'size' },
        },
      },
      {
        data: { values: [{ goal: 1.5 }] },
        mark: { type: 'rule', color: '#b00', strokeDash: [4, 3] },
        encoding: { x: { field: 'goal', type: 'quantitative' } },
      },
      {
        data: { values: [{ same: 1 }] },
        mark: { type: 'rule', color: '#888' },
        encoding: { x: { field: 'same', type: 'quantitative' } },
      },
    ],
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return `${svg}\n`;
}
