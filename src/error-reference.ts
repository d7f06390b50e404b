import { readFile, writeFile } from 'node:fs/promises';
import { ERROR_CATALOGUE, ERROR_KEYS, errorCodeOf } from './error-catalogue.js';
import { resolveFromRoot } from './paths.js';
import { isEntryPoint } from './entry-point.js';

const cell = (text: string) => text.replaceAll('|', '\\|');

/** docs/errors.md: the table of every errorCode, generated from the error catalogue (src/error-catalogue.ts). */
export function errorReference(): string {
  const rows = [...ERROR_KEYS]
    .sort((a, b) => ERROR_CATALOGUE[a].status - ERROR_CATALOGUE[b].status)
    .map((key) => {
      const entry = ERROR_CATALOGUE[key];
      return `| ${entry.status} | \`${errorCodeOf(key)}\` | ${cell(entry.description)} |`;
    });
  return ['| status | errorCode | meaning |', '|---|---|---|', ...rows].join('\n');
}

export const BEGIN = '<!-- generated from src/error-catalogue.ts by `npm run docs:errors`: edit the catalogue, not this table -->';
export const END = '<!-- end of the generated error table -->';

/** The document with its error table regenerated. */
export function withErrorReference(doc: string): string {
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error('docs/errors.md lacks the generated error table markers');
  return `${doc.slice(0, from + BEGIN.length)}\n${errorReference()}\n${doc.slice(to)}`;
}

if (isEntryPoint(import.meta.url)) {
  const file = resolveFromRoot('docs/errors.md');
  await writeFile(file, withErrorReference(await readFile(file, 'utf8')));
}
