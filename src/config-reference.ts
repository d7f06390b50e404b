import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { envSchema } from './config.js';
import { resolveFromRoot } from './paths.js';
import { isEntryPoint } from './entry-point.js';

/** What `.meta()` on a variable of the config schema says: its meaning, and a default in words when the schema's own is computed at start. */
interface VariableMeta {
  description: string;
  shownDefault?: string;
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  const?: string | number | boolean;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  format?: string;
  pattern?: string;
};

/** The values a variable accepts, in words, from its schema. */
function accepts(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(accepts).join(' or ');
  if (s.const !== undefined) return `\`${String(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (s.type === 'integer' || s.type === 'number') {
    const kind = s.type === 'integer' ? 'integer' : 'number';
    if (s.minimum === undefined && s.exclusiveMinimum !== undefined) {
      return accepts({ ...s, exclusiveMinimum: undefined, minimum: kind === 'integer' ? s.exclusiveMinimum + 1 : s.exclusiveMinimum });
    }
    if (s.minimum !== undefined && s.maximum !== undefined) return `${kind} ${s.minimum}–${s.maximum}`;
    if (s.minimum !== undefined) return `${kind} ≥ ${s.minimum}`;
    return kind;
  }
  if (s.format === 'uri') return 'URL';
  if (s.pattern) return `text matching \`${s.pattern}\``;
  if (s.minLength !== undefined && s.minLength > 1) return `text, ≥ ${s.minLength} characters`;
  return 'text';
}

function defaultOf(field: z.ZodType, meta: VariableMeta): string {
  if (meta.shownDefault) return meta.shownDefault;
  const def = (field as unknown as { def: { type: string; defaultValue?: unknown } }).def;
  return def.type === 'default' ? `\`${String(def.defaultValue)}\`` : 'unset';
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The reference table of every environment variable, generated from the config schema (src/config.ts). */
export function configReference(): string {
  const rows = Object.entries(envSchema.shape).map(([name, field]) => {
    const meta = z.globalRegistry.get(field) as VariableMeta | undefined;
    if (!meta?.description) throw new Error(`${name} has no description in the config schema`);
    const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    return `| \`${name}\` | ${cell(defaultOf(field, meta))} | ${cell(accepts(schema))} | ${cell(meta.description)} |`;
  });
  return ['| variable | default | accepts | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/**
 * `.env.example`: every variable commented out at its default, with what it means and accepts, for
 * an env file of compose or an orchestrator (Intake itself reads only its environment).
 */
export function envExample(): string {
  const blocks = Object.entries(envSchema.shape).map(([name, field]) => {
    const meta = z.globalRegistry.get(field) as VariableMeta;
    const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const def = (field as unknown as { def: { type: string; defaultValue?: unknown } }).def;
    const value = def.type === 'default' && !meta.shownDefault ? String(def.defaultValue) : '';
    const plain = (text: string) => text.replaceAll('`', '');
    const shown = meta.shownDefault ? `; default: ${plain(meta.shownDefault)}` : '';
    return `# ${plain(meta.description)} (${plain(accepts(schema))}${shown})\n# ${name}=${value}`;
  });
  return [
    "# Intake's environment variables, generated from src/config.ts by `npm run docs:config` (a test keeps it current).",
    '# Each is commented out at its default; docs/configuration.md explains them, and which production requires.',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

export const BEGIN = '<!-- generated from src/config.ts by `npm run docs:config`: edit the schema, not this table -->';
export const END = '<!-- end of the generated table -->';

/** docs/configuration.md with its table regenerated. */
export function withReference(doc: string): string {
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error('docs/configuration.md lacks the generated table markers');
  return `${doc.slice(0, from + BEGIN.length)}\n${configReference()}\n${doc.slice(to)}`;
}

if (isEntryPoint(import.meta.url)) {
  const file = resolveFromRoot('docs/configuration.md');
  await writeFile(file, withReference(await readFile(file, 'utf8')));
  await writeFile(resolveFromRoot('.env.example'), envExample());
}
