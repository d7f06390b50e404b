import { strict as assert } from 'node:assert';
import { maskSecrets, tableFindings } from '../../../../src/domain/sanitize/mask-secrets.js';
import { ISSUE_EXAMPLE, PREFIXED_FORMATS, tokenOfLength } from './prefixed-token-formats.js';
import { caseText, ORDINARY, SECRETS } from './secret-corpus.js';
import { secretlintCorpus } from './secretlint-corpus.js';
import { secretlintFindings, type OracleFinding } from './secretlint-oracle.js';

/**
 * Issue 34 replaced secretlint (run once per string beside Intake's table) with the table alone. This
 * holds the table to secretlint's recommended preset, kept as a dev dependency: on secretlint's own
 * test corpus (its snapshot inputs, test/fixtures/secretlint-corpus) and on Intake's masking corpus,
 * every secret the preset finds is masked by the table. Where the preset reports a whole URL, the
 * secret is the URL's password: the table masks that and keeps the host readable.
 */
function intakeCorpus(): { name: string; text: string }[] {
  const tokens = PREFIXED_FORMATS.flatMap((format) =>
    [format.min - 1, format.min, format.body.length, format.body.length + 20].map((length) => ({
      name: `${format.name} (${length})`,
      token: tokenOfLength(format, length),
    })),
  );
  return [
    ...SECRETS.map((c) => ({ name: c.name, text: caseText(c) })),
    ...ORDINARY.map((text, i) => ({ name: `ordinary ${i}`, text })),
    ...tokens.flatMap(({ name, token }) => [
      { name, text: `before ${token} after` },
      { name: `${name} quoted`, text: `("${token}").` },
    ]),
    { name: 'issue 15 example', text: ISSUE_EXAMPLE },
  ];
}

const URL_RULES = new Set(['@secretlint/secretlint-rule-basicauth', '@secretlint/secretlint-rule-database-connection-string']);

/** The range holding the secret of a finding: a URL's password, else the finding. */
function secretRange(text: string, finding: OracleFinding): readonly [number, number] {
  if (!URL_RULES.has(finding.ruleId)) return [finding.start, finding.end];
  const url = text.slice(finding.start, finding.end);
  const credentials = /^[^:]+(?::[^:/]+)?:\/\/[^:/@\s]*:/.exec(url);
  assert.ok(credentials, `${finding.ruleId} reported a URL without a password: ${url}`);
  const start = finding.start + credentials[0].length;
  return [start, finding.start + url.lastIndexOf('@')];
}

function uncovered(text: string, range: readonly [number, number]): number {
  const masked = tableFindings(text);
  let count = 0;
  for (let i = range[0]; i < range[1]; i += 1) if (!masked.some((m) => m.start <= i && i < m.end)) count += 1;
  return count;
}

describe("Intake's secret table against secretlint's recommended preset (issue 34)", () => {
  const corpora = { "secretlint's own corpus": secretlintCorpus(), "Intake's masking corpus": intakeCorpus() };

  for (const [label, corpus] of Object.entries(corpora)) {
    it(`masks every secret the preset finds in ${label}`, async () => {
      let findings = 0;
      const lost: string[] = [];
      for (const { name, text } of corpus) {
        for (const finding of await secretlintFindings(text)) {
          findings += 1;
          const range = secretRange(text, finding);
          const left = uncovered(text, range);
          if (left > 0)
            lost.push(`${name}: ${finding.messageId}, ${left} of ${range[1] - range[0]} characters left: ${text.slice(...range)}`);
        }
      }
      assert.deepEqual(lost, []);
      // The oracle has something to say: most of the corpus holds secrets it knows.
      assert.ok(findings >= (label.startsWith('secretlint') ? 60 : 100), `${findings} findings`);
    });
  }

  it("has secretlint's corpus of every rule the preset runs on text", () => {
    const rules = new Set(corpora["secretlint's own corpus"].map(({ name }) => name.split('/')[0]));
    for (const rule of [
      'aws',
      'basicauth',
      'database-connection-string',
      'github',
      'gitlab',
      'slack',
      'npm',
      'privatekey',
      'openai',
      'anthropic',
    ])
      assert.ok(rules.has(rule), rule);
    assert.ok(rules.size >= 25, `${rules.size} rules`);
  });

  it('leaves the ordinary corpus as it is, as the preset does', async () => {
    for (const text of ORDINARY) {
      assert.deepEqual(await secretlintFindings(text), [], text);
      assert.equal(maskSecrets(text), text);
    }
  });
});
