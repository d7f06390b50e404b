import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../../src/paths.js';

/**
 * secretlint's own test corpus: the snapshot inputs of its recommended preset's tests (MIT, copied
 * from secretlint/secretlint at 18346ba3 into test/fixtures/secretlint-corpus, one folder per rule;
 * binary PKCS#12 inputs and filter-comments' cases left out).
 */
const CORPUS_DIR = path.join(PROJECT_ROOT, 'test/fixtures/secretlint-corpus');

export function secretlintCorpus(): { name: string; text: string }[] {
  return readdirSync(CORPUS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((rule) =>
      readdirSync(path.join(CORPUS_DIR, rule.name)).map((file) => ({
        name: `${rule.name}/${file}`,
        text: readFileSync(path.join(CORPUS_DIR, rule.name, file), 'utf8'),
      })),
    );
}
