import { strict as assert } from 'node:assert';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { createSignalExtractor, type Exchange, type ExtractedSignal } from '../../../src/providers/signal-extractor/index.js';

const extractor = new LocalSignalExtractor();
const run = (userMessages: string[], response = '') => extractor.extract({ userMessages, response });
const ofKind = (signals: ExtractedSignal[], kind: ExtractedSignal['kind']) => signals.filter((s) => s.kind === kind);

describe('LocalSignalExtractor', () => {
  it('is named local, also when built from config', () => {
    assert.equal(extractor.name, 'local');
    assert.equal(createSignalExtractor({ kind: 'local' }).name, 'local');
  });

  describe('sentiment', () => {
    it('rates positive user text positive', async () => {
      const [sentiment] = ofKind(await run(['This is excellent, it works nicely and is so useful.']), 'sentiment');
      assert.equal(sentiment?.rating, 'positive');
      assert.match(sentiment.summary, /positive \(score \+3\)/);
    });

    it('rates negative user text negative', async () => {
      const [sentiment] = ofKind(await run(['This is terrible and slow. Honestly awful.']), 'sentiment');
      assert.equal(sentiment?.rating, 'negative');
      assert.match(sentiment.summary, /negative \(score -3\)/);
    });

    it('gives no sentiment for neutral or balanced user text', async () => {
      assert.deepEqual(ofKind(await run(['Please rename the column to created_at.']), 'sentiment'), []);
      assert.deepEqual(ofKind(await run(['The good part is fast, the bad part is slow.']), 'sentiment'), []);
    });

    it('flips the next word after a negator, across intensifiers and contractions', async () => {
      assert.equal(ofKind(await run(['This is not good.']), 'sentiment')[0]?.rating, 'negative');
      assert.equal(ofKind(await run(['This is not very good.']), 'sentiment')[0]?.rating, 'negative');
      assert.equal(ofKind(await run(["That wasn't bad at all."]), 'sentiment')[0]?.rating, 'positive');
      assert.equal(ofKind(await run(['Nothing works.']), 'sentiment')[0]?.rating, 'negative');
    });

    it('does not carry a negation past the end of a sentence', async () => {
      assert.equal(ofKind(await run(['No. Great answer.']), 'sentiment')[0]?.rating, 'positive');
    });

    it('reads only the user text, never the response', async () => {
      assert.deepEqual(ofKind(await run([], 'This terrible awful bug is broken.'), 'sentiment'), []);
      assert.deepEqual(ofKind(await run(['Rename the file.'], 'Great, excellent, perfect!'), 'sentiment'), []);
    });
  });

  describe('issue', () => {
    const issues: string[] = [
      'The build throws an error',
      'Found a bug in paging',
      'The button is broken',
      'The app crashed on start',
      'The upload fails',
      'The upload failed twice',
      "It doesn't work",
      'It does not work',
      'The result is wrong',
      "I can't log in",
      'I cannot log in',
      'Sync is not working',
      'There is an issue with sync',
      'Big problem here',
    ];
    for (const text of issues) {
      it(`reports an issue for "${text}"`, async () => {
        const [issue, ...rest] = ofKind(await run([text]), 'issue');
        assert.equal(rest.length, 0);
        assert.equal(issue?.rating, 'negative');
        assert.equal(issue.summary, `Issue reported: ${text}`);
      });
    }

    it('names the first matching sentence, whitespace collapsed', async () => {
      const [issue] = ofKind(await run(['Hello there.  The   export\tcrashes. Also another bug.']), 'issue');
      assert.equal(issue?.summary, 'Issue reported: The export crashes.');
    });

    it('cuts a long sentence to 500 characters', async () => {
      const [issue] = ofKind(await run([`The error ${'x'.repeat(1000)}`]), 'issue');
      assert.equal(issue?.summary.length, 500);
      assert.ok(issue.summary.endsWith('…'));
    });

    it('matches whole words only', async () => {
      assert.deepEqual(ofKind(await run(['The errorless mirror is bugsy and problematic.']), 'issue'), []);
      assert.deepEqual(ofKind(await run(['Terrors and debuggers, scanners.']), 'issue'), []);
    });
  });

  describe('request', () => {
    const requests = [
      'Can you add a dark mode?',
      'Please add CSV export.',
      'Feature request: webhooks.',
      'I would like a shortcut.',
      "I'd love a shortcut.",
      'I wish it had tabs.',
      'It would be great if it remembered me.',
      'Could you support Postgres 18?',
      'Add support for YAML.',
    ];
    for (const text of requests) {
      it(`reports a request for "${text}"`, async () => {
        const [request, ...rest] = ofKind(await run([text]), 'request');
        assert.equal(rest.length, 0);
        assert.equal(request?.rating, null);
        assert.equal(request.summary, `Request: ${text}`);
      });
    }

    it('gives no request for a plain question', async () => {
      assert.deepEqual(ofKind(await run(['What does this function return?']), 'request'), []);
    });
  });

  describe('praise', () => {
    for (const text of [
      'Thanks!',
      'Thank you, that fixed it.',
      'Awesome.',
      'I love it.',
      'Perfect answer.',
      'Very helpful.',
      'Great job.',
    ]) {
      it(`reports praise for "${text}"`, async () => {
        const [praise, ...rest] = ofKind(await run([text]), 'praise');
        assert.equal(rest.length, 0);
        assert.equal(praise?.rating, 'positive');
        assert.equal(praise.summary, `Praise: ${text}`);
      });
    }

    it('does not count negated praise', async () => {
      assert.deepEqual(ofKind(await run(['That was not great.']), 'praise'), []);
      assert.deepEqual(ofKind(await run(['No thanks.']), 'praise'), []);
    });

    it('names the first sentence with praise', async () => {
      assert.equal(ofKind(await run(['Not great. But thanks anyway!']), 'praise')[0]?.summary, 'Praise: But thanks anyway!');
    });
  });

  describe('topics', () => {
    it('ranks words by count, then alphabetically, over user text and response', async () => {
      const [topic] = ofKind(await run(['Zebra database, apple database.'], 'Mango zebra database; apple pear.'), 'topic');
      assert.deepEqual(topic?.labels, ['database', 'apple', 'zebra']);
      assert.equal(topic.summary, 'Topics: database, apple, zebra');
      assert.equal(topic.rating, null);
    });

    it('skips stop words, words under 4 letters, numbers and evaluative words', async () => {
      const [topic] = ofKind(await run(['This would have been their great API for the SQL 2024 migration, thanks.']), 'topic');
      assert.deepEqual(topic?.labels, ['migration']);
    });

    it('lower-cases and folds contractions', async () => {
      const [topic] = ofKind(await run(["The Server's config. SERVER config, server."]), 'topic');
      assert.deepEqual(topic?.labels, ['server', 'config']);
    });

    it('gives no topic when no word qualifies', async () => {
      assert.deepEqual(await run(['ok, do it'], 'Done: it is so.'), []);
    });

    it('labels every signal with the topics', async () => {
      const signals = await run(['Thanks, great tool, but the export crashed. Please add retries.'], 'The export retries now.');
      assert.equal(signals.length, 5);
      for (const signal of signals) assert.deepEqual(signal.labels, ['export', 'retries', 'crashed']);
    });
  });

  it('emits signals in the stable order sentiment, issue, request, praise, topic', async () => {
    const signals = await run(['Please add dark mode. Thanks a lot, great!', 'Also the sidebar is broken.'], 'Sidebar fixed.');
    assert.deepEqual(
      signals.map((s) => s.kind),
      ['sentiment', 'issue', 'request', 'praise', 'topic'],
    );
  });

  it('is deterministic', async () => {
    const exchange: Exchange = {
      userMessages: ['Great tool, but the login fails. Could you add SSO?'],
      response: 'SSO login is planned; the login failure is a known bug.',
    };
    const first = await extractor.extract(exchange);
    for (let i = 0; i < 5; i++) assert.deepEqual(await new LocalSignalExtractor().extract(exchange), first);
  });

  it('handles non-English and other Unicode text without throwing', async () => {
    const signals = await run(
      ['Это не работает, ошибка 😀 数据库错误 🚀🚀', 'Ça ne marche pas: éléphant éléphant'],
      'Ошибка в базе данных ‮ \u0000',
    );
    const [topic] = ofKind(signals, 'topic');
    assert.deepEqual(topic?.labels, ['éléphant', 'ошибка', 'marche']);
    for (const signal of signals) assert.ok(signal.summary.length <= 500);
  });

  it('never splits a surrogate pair when cutting a summary', async () => {
    const [issue] = ofKind(await run([`bug ${'😀'.repeat(400)}`]), 'issue');
    assert.ok(issue!.summary.length <= 500);
    assert.doesNotMatch(issue!.summary, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('derives only topics from the response when there is no user text', async () => {
    const signals = await run([], 'The terrible migration failed; thanks for waiting. Migration retried.');
    assert.deepEqual(
      signals.map((s) => s.kind),
      ['topic'],
    );
    assert.deepEqual(signals[0]?.labels, ['migration', 'failed', 'retried']);
    assert.deepEqual(await run(['   ', ''], ''), []);
  });
});
