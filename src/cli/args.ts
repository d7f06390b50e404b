import { parseArgs } from 'node:util';
import { CliError } from './context.js';

export type Flags = Record<string, string | boolean | undefined>;

/** Parses `--name value` flags; unknown flags are usage errors (exit code 2). */
export function flags(argv: string[], spec: Record<string, 'string' | 'boolean'>): Flags {
  try {
    const { values } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(spec).map(([k, type]) => [k, { type }])),
      strict: true,
      allowPositionals: false,
    });
    return values;
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
}

export function str(f: Flags, name: string): string {
  const v = f[name];
  if (typeof v !== 'string' || v.trim() === '') throw new CliError(`--${name} is required`, 2);
  return v.trim();
}

export function optStr(f: Flags, name: string): string | undefined {
  const v = f[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

export function int(f: Flags, name: string, { min, max, fallback }: { min: number; max: number; fallback?: number }): number {
  const raw = f[name];
  if (raw === undefined && fallback !== undefined) return fallback;
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError(`--${name} must be an integer from ${min} to ${max}`, 2);
  return n;
}

export function list(f: Flags, name: string): string[] | undefined {
  const v = optStr(f, name);
  return v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/**
 * `--page N` (from 1) and `--limit L` (1 to 1,000, default 100): the REST lists' paging, for `… list`
 * commands, which fetch with api/paging's `pageWindow` and answer its `pageBody`.
 */
export function paging(f: Flags): { page: number; limit: number } {
  return { page: int(f, 'page', { min: 1, max: 1_000_000, fallback: 1 }), limit: int(f, 'limit', { min: 1, max: 1000, fallback: 100 }) };
}

/** The flags `paging` reads. */
export const PAGING_FLAGS = { page: 'string', limit: 'string' } as const;
