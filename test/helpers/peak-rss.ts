import { writeFileSync } from 'node:fs';

/**
 * Preloaded into a child process (`--import`): at its exit, writes its peak resident memory (the
 * kernel's high-water mark, in KiB) to PEAK_RSS_FILE. Exact, where sampling /proc from outside
 * misses a short process's peak.
 */
process.on('exit', () => {
  if (process.env.PEAK_RSS_FILE) writeFileSync(process.env.PEAK_RSS_FILE, String(process.resourceUsage().maxRSS));
});
