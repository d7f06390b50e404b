import { strict as assert } from 'node:assert';
import { maskSecrets, tableFindings } from '../../../../src/domain/sanitize/mask-secrets.js';
import { MIN_BINARY_PAYLOAD_LENGTH, SECRET_PATTERNS } from '../../../../src/domain/sanitize/secret-patterns.js';
import { ALNUM, B64, UPPER, DIGITS } from './fake-secrets.js';
import { secretlintCorpus } from './secretlint-corpus.js';
import { caseText, fake, jwt, ORDINARY, pem, SECRETS } from './secret-corpus.js';
import { ISSUE_EXAMPLE, MAX_EXTRA, maskedToken, PREFIXED_FORMATS, tokenOfLength } from './prefixed-token-formats.js';

describe('maskSecrets', () => {
  describe('masks secret formats', () => {
    it('has a corpus of at least 30 formats', () => {
      assert.ok(SECRETS.length >= 30);
    });

    for (const { name, secret, text } of SECRETS) {
      it(`masks ${name}`, () => {
        const output = maskSecrets(caseText({ name, secret, text }));
        assert.ok(!output.includes(secret), `${name} left in: ${output}`);
        assert.match(output, /\[REDACTED:[a-z0-9_]+\]/);
      });
    }
  });

  describe('leaves ordinary prose and code intact', () => {
    it('has a corpus of at least 20 snippets', () => {
      assert.ok(ORDINARY.length >= 20);
    });

    for (const text of ORDINARY) {
      it(`keeps: ${text.slice(0, 50).replace(/\n/g, ' ')}`, () => {
        assert.equal(maskSecrets(text), text);
      });
    }
  });

  describe('masks prefixed tokens whole at any length from a minimum on (issue 15)', () => {
    const contexts = [(t: string): string => `before ${t} after`, (t: string): string => `("${t}").`];

    it('masks the example of the issue, 38 characters after ghp_', () => {
      assert.equal(ISSUE_EXAMPLE.length, 4 + 38);
      assert.equal(maskSecrets(`my token is ${ISSUE_EXAMPLE} thanks`), 'my token is [REDACTED:github_token] thanks');
    });

    for (const format of PREFIXED_FORMATS) {
      const standard = format.body.length;
      const lengths = [standard, standard + 2, standard + 20, standard + MAX_EXTRA, Math.ceil((standard + format.min) / 2), format.min];
      it(`${format.name}: body of ${lengths.join(', ')} characters`, () => {
        for (const length of lengths) {
          const token = tokenOfLength(format, length);
          // Equality: no character of the token is left next to the mask.
          for (const context of contexts) assert.equal(maskSecrets(context(token)), context(maskedToken(format)), `${length}: ${token}`);
        }
      });

      // Slack's segmented tokens are masked at any length (secretlint's rule, ported): the differential test covers them.
      if (!format.anyLength)
        it(`${format.name}: body of ${format.min - 1} characters left alone`, () => {
          const token = tokenOfLength(format, format.min - 1);
          assert.equal(maskSecrets(`before ${token} after`), `before ${token} after`);
        });
    }

    it('leaves the prefixes alone in prose and code', () => {
      const texts = [
        'Stripe keys start with sk_live_ or rk_test_, GitHub ones with ghp_ or github_pat_, Slack ones with xoxb-.',
        'npm_config_strict_peer_dependencies=true npm_package_devDependencies_typescript=5.9.3',
        'The scikit-learn task-specific-parameters-for-classification estimator is fine.',
        'hf_hub_download(repo_id="bert-base-uncased"); AIDA, AROA and ASIA are AWS id prefixes.',
        'SG.Singapore.Region and key-0123abcd are labels; AccountKey= holds the storage account key.',
      ];
      for (const text of texts) assert.equal(maskSecrets(text), text);
    });
  });

  it('masks base64 from the binary payload length on, not below', () => {
    const blob = fake(B64.slice(0, 62), MIN_BINARY_PAYLOAD_LENGTH);
    assert.equal(maskSecrets(`a ${blob.slice(1)} b`), `a ${blob.slice(1)} b`);
    assert.equal(maskSecrets(`a ${blob} b`), 'a [REDACTED:binary_payload] b');
  });

  it('ignores secretlint-disable comments written in a message', () => {
    const token = `ghp_${fake(ALNUM, 36)}`;
    const key = `AKIA${fake(UPPER + DIGITS, 16)}`;
    for (const comment of [
      '// secretlint-disable',
      '<!-- secretlint-disable -->',
      '# secretlint-disable-line',
      'secretlint-disable-next-line',
    ]) {
      const output = maskSecrets(`${comment}\n${token} ${key} ${comment}`);
      assert.ok(!output.includes(token), output);
      assert.ok(!output.includes(key), output);
    }
  });

  it('names the kind of each secret and keeps the text around it', () => {
    const token = `ghp_${fake(ALNUM, 36)}`;
    assert.equal(maskSecrets(`use ${token} now`), 'use [REDACTED:github_token] now');
    const key = fake(ALNUM, 40);
    assert.equal(maskSecrets(`aws_secret_access_key = "${key}"`), 'aws_secret_access_key = "[REDACTED:aws_secret_access_key]"');
    assert.equal(maskSecrets(`Authorization: Bearer ${jwt()}`), 'Authorization: Bearer [REDACTED:bearer_token]');
  });

  it('merges overlapping findings into one mask', () => {
    const output = maskSecrets(`token: "sk_live_${fake(ALNUM, 30)}" and ${pem('RSA PRIVATE KEY', 'MIIEowIBAAKCAQEA')}`);
    assert.equal(output, 'token: "[REDACTED:stripe_key]" and [REDACTED:private_key]');
  });

  it('is deterministic and idempotent', () => {
    const input = SECRETS.map(({ secret, text }) => (text ? text(secret) : secret)).join('\n');
    const once = maskSecrets(input);
    assert.equal(maskSecrets(input), once);
    assert.equal(maskSecrets(once), once);
  });

  it('uses stable snake_case kinds in its table', () => {
    for (const pattern of SECRET_PATTERNS) {
      assert.match(pattern.kind, /^[a-z][a-z0-9_]*$/);
      assert.ok(pattern.regex.global, pattern.kind);
      assert.ok(pattern.why.length > 0, pattern.kind);
    }
  });

  it('runs a pattern only on texts with one of its keywords or of its minimum length, with the same findings as running every pattern', () => {
    for (const pattern of SECRET_PATTERNS) assert.ok((pattern.keywords?.length ?? 0) > 0 || (pattern.minLength ?? 0) > 0, pattern.kind);
    const tokens = PREFIXED_FORMATS.flatMap((format) =>
      [format.min - 1, format.min, format.min + 20].map((length) => tokenOfLength(format, length)),
    );
    const texts = [
      ...SECRETS.map(({ secret, text }) => (text ? text(secret) : secret)),
      ...ORDINARY,
      ...tokens.flatMap((token) => [token, `before ${token} after`, `("${token.toUpperCase()}").`, token.toLowerCase()]),
      ISSUE_EXAMPLE,
      ...secretlintCorpus().map(({ text }) => text),
    ];
    let skipped = 0;
    for (const text of texts) {
      assert.deepEqual(tableFindings(text), tableFindings(text, { all: true }), text);
      skipped += SECRET_PATTERNS.filter((p) => p.keywords && !p.keywords.some((k) => text.toLowerCase().includes(k))).length;
    }
    assert.ok(skipped > texts.length * 10, `the prefilter skipped ${skipped} pattern runs over ${texts.length} texts`);
  });
});
