/**
 * Draws the Grafana dashboard's panels from Prometheus range queries, in the dashboard's own grid
 * (24 columns, `gridPos`), with uPlot in Debian's Chromium (playwright-core), and saves a PNG.
 * Grafana itself cannot run here (its web frontend is not in a Go build, and its packages are not
 * reachable); operators get the JSON, the docs get this picture of the same queries.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';

export interface PanelData {
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  /** Grafana's unit: ops, reqps, s, percentunit, short. */
  unit: string;
  series: { name: string; points: [number, number][] }[];
}

const WIDTH = 1800;
const ROW_PX = 30;
const GAP = 8;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The page: inline uPlot, the data, and the script that draws it (no external asset). */
function page(
  panels: readonly PanelData[],
  o: { title: string; subtitle: string; from: number; to: number },
  uplot: { js: string; css: string },
): string {
  const data = JSON.stringify({ panels, from: o.from, to: o.to, width: WIDTH, rowPx: ROW_PX, gap: GAP });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${o.title}</title>
<style>${uplot.css}
  body { margin: 0; background: #111217; color: #ccccdc; font: 13px/1.4 "DejaVu Sans", "Liberation Sans", sans-serif; }
  header { padding: 12px 16px 4px; } header h1 { font-size: 18px; font-weight: 500; margin: 0; color: #e6e6f0; }
  header p { margin: 2px 0 0; color: #8e8e9e; font-size: 12px; }
  #grid { position: relative; margin: 8px 16px; }
  .panel { position: absolute; background: #181b1f; border: 1px solid #2c3235; border-radius: 2px; box-sizing: border-box; overflow: hidden; }
  .panel h2 { font-size: 13px; font-weight: 500; margin: 6px 8px 0; color: #ccccdc; white-space: nowrap; }
  .row { position: absolute; font-size: 15px; font-weight: 500; color: #e6e6f0; border-bottom: 1px solid #2c3235; box-sizing: border-box; padding-top: 6px; }
  .u-legend { font-size: 11px; color: #ccccdc; text-align: left; margin: 0 8px; } .u-legend th { font-weight: 400; }
  .u-legend .u-marker { width: 10px; height: 3px; } .u-legend .u-series { padding: 0 6px 0 0; }
  .empty { position: absolute; top: 45%; width: 100%; text-align: center; color: #6e6e7e; }
</style></head>
<body><header><h1>${o.title}</h1><p>${o.subtitle}</p></header><div id="grid"></div>
<script>${uplot.js}</script>
<script>
const D = ${data};
const palette = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#fade2a', '#37872d', '#ca95e5'];
const si = (v) => { const a = Math.abs(v); return a >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : a >= 1e3 ? (v / 1e3).toFixed(1) + 'k' : a >= 10 || a === 0 ? v.toFixed(0) : v.toFixed(a >= 1 ? 1 : 2); };
const fmt = {
  ops: (v) => si(v) + '/s', reqps: (v) => si(v) + ' req/s', percentunit: (v) => (v * 100).toFixed(v < 0.1 ? 1 : 0) + '%', short: si,
  s: (v) => { const a = Math.abs(v); return a === 0 ? '0' : a < 1 ? (v * 1000).toFixed(0) + ' ms' : a < 60 ? v.toFixed(a < 10 ? 1 : 0) + ' s' : (v / 60).toFixed(1) + ' min'; },
};
const grid = document.getElementById('grid');
const col = (D.width - 32) / 24;
let bottom = 0;
for (const p of D.panels) {
  const g = p.gridPos;
  const left = g.x * col, top = g.y * (D.rowPx + D.gap / 2), width = g.w * col - D.gap, height = g.h * (D.rowPx + D.gap / 2) - D.gap;
  bottom = Math.max(bottom, top + height + D.gap);
  const el = document.createElement('div');
  el.className = p.type === 'row' ? 'row' : 'panel';
  Object.assign(el.style, { left: left + 'px', top: top + 'px', width: width + 'px', height: (p.type === 'row' ? D.rowPx : height) + 'px' });
  if (p.type === 'row') { el.textContent = p.title; grid.appendChild(el); continue; }
  el.innerHTML = '<h2></h2>'; el.firstChild.textContent = p.title; grid.appendChild(el);
  const step = 2, n = Math.floor((D.to - D.from) / step) + 1;
  const xs = Array.from({ length: n }, (_, i) => D.from + i * step);
  const ys = p.series.map((s) => { const y = new Array(n).fill(null); for (const [t, v] of s.points) { const i = Math.round((t - D.from) / step); if (i >= 0 && i < n && Number.isFinite(v)) y[i] = v; } return y; });
  if (!p.series.length) { const e = document.createElement('div'); e.className = 'empty'; e.textContent = 'No data'; el.appendChild(e); }
  const f = fmt[p.unit] || si;
  // The legend's rows, as the labels wrap (about 6.5 px a character, 30 px around each).
  let legendRows = p.series.length ? 1 : 0, used = 0;
  for (const s of p.series) { const w = s.name.length * 6.5 + 30; if (used + w > width - 16 && used > 0) { legendRows++; used = 0; } used += w; }
  new uPlot({
    width: width - 2, height: height - 34 - legendRows * 17,
    legend: { live: false, show: p.series.length > 0 },
    cursor: { show: false },
    scales: { x: { time: true }, y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
    axes: [
      { stroke: '#8e8e9e', grid: { stroke: '#2c3235', width: 1 }, ticks: { stroke: '#2c3235' }, font: '11px sans-serif', values: (u, splits) => splits.map((t) => new Date(t * 1000).toISOString().slice(11, D.to - D.from > 1200 ? 16 : 19)) },
      { stroke: '#8e8e9e', grid: { stroke: '#2c3235', width: 1 }, ticks: { stroke: '#2c3235' }, font: '11px sans-serif', size: 64, values: (u, splits) => splits.map(f) },
    ],
    series: [{}, ...p.series.map((s, i) => ({ label: s.name, stroke: palette[i % palette.length], width: 1.5, fill: palette[i % palette.length] + '18', points: { show: false }, spanGaps: false }))],
  }, [xs, ...ys], el);
}
grid.style.height = bottom + 'px';
window.__drawn = true;
</script></body></html>`;
}

/** Draws `panels` and writes the PNG to `outPath`. */
export async function renderDashboard(
  panels: readonly PanelData[],
  o: { title: string; subtitle?: string; from: number; to: number; outPath: string },
): Promise<void> {
  const require = createRequire(import.meta.url);
  const dist = path.dirname(require.resolve('uplot/dist/uPlot.iife.min.js'));
  const uplot = {
    js: await readFile(path.join(dist, 'uPlot.iife.min.js'), 'utf8'),
    css: await readFile(path.join(dist, 'uPlot.min.css'), 'utf8'),
  };
  const minutes = ((o.to - o.from) / 60).toFixed(1);
  const subtitle = o.subtitle ?? `${new Date(o.from * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC, ${minutes} minutes`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: WIDTH, height: 900 }, deviceScaleFactor: 1 });
    await tab.setContent(page(panels, { title: o.title, subtitle, from: o.from, to: o.to }, uplot));
    await tab.waitForFunction('window.__drawn === true');
    await mkdir(path.dirname(o.outPath), { recursive: true });
    await tab.screenshot({ path: o.outPath, fullPage: true });
  } finally {
    await browser.close();
  }
}
