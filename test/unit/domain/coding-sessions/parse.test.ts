import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { withoutReminders } from '../../../../src/domain/coding-sessions/claude-code.js';
import { MAX_MESSAGE_CHARACTERS, parseSession, SessionParseError } from '../../../../src/domain/coding-sessions/index.js';
import { AppError } from '../../../../src/errors.js';
import { PROJECT_ROOT } from '../../../../src/paths.js';

const fixture = (name: string) => readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'coding-sessions', name), 'utf8');
const pairs = (content: string, format?: Parameters<typeof parseSession>[1]) =>
  parseSession(content, format).messages.map((m) => [m.type === 'user_message' ? 'user' : 'assistant', m.content]);

function parseError(content: string, format?: Parameters<typeof parseSession>[1]): SessionParseError {
  try {
    parseSession(content, format);
  } catch (error) {
    assert.ok(error instanceof SessionParseError, String(error));
    return error;
  }
  assert.fail('expected a SessionParseError');
}

describe('coding-agent session files', () => {
  it('Claude Code: visible text only, streamed blocks of one response joined, summary as title', () => {
    const session = parseSession(fixture('claude-code.jsonl'));
    assert.equal(session.format, 'claude-code');
    assert.equal(session.title, 'Refactor checkout payment retries');
    assert.deepEqual(
      session.messages.map((m) => [m.type, m.content.split('\n')[0], m.occurredAt]),
      [
        [
          'user_message',
          'The payment retry in src/checkout/pay.ts retries forever. Cap it at 3 attempts. The CI token is ghp_Zx8Kq2Lm4Np6Rt0Vw3Yb5Cd7Fg9Hj1Ks3Mn5 if you need it.',
          '2026-10-01T09:00:05.120Z',
        ],
        ['assistant_message', "I'll look at the retry loop first.", '2026-10-01T09:00:09.900Z'],
        [
          'assistant_message',
          'The loop in `pay()` has no exit. I changed it to stop after 3 attempts with exponential backoff, and added a test.',
          '2026-10-01T09:00:14.000Z',
        ],
        ['user_message', 'Thanks, looks good.', '2026-10-01T09:01:00.000Z'],
      ],
    );
    const all = JSON.stringify(session);
    for (const hidden of ['system-reminder', 'thinking', 'file_path', 'while (true)', 'Sub-agent', 'Caveat', '/clear'])
      assert.ok(!all.includes(hidden), hidden);
  });

  it('Claude Code: text blocks of one message id are joined into one response', () => {
    const line = (id: string, text: string) =>
      JSON.stringify({ type: 'assistant', message: { id, role: 'assistant', content: [{ type: 'text', text }] } });
    const user = JSON.stringify({ type: 'user', message: { role: 'user', content: 'go' } });
    assert.deepEqual(pairs([user, line('m1', 'one'), line('m1', 'two'), line('m2', 'three')].join('\n')), [
      ['user', 'go'],
      ['assistant', 'one\n\ntwo'],
      ['assistant', 'three'],
    ]);
  });

  it('Codex CLI rollout: user and assistant messages only, no developer, injected context, reasoning, tool calls or event echoes', () => {
    const session = parseSession(fixture('codex.jsonl'));
    assert.equal(session.format, 'codex');
    assert.deepEqual(pairs(fixture('codex.jsonl')), [
      ['user', 'test/orders.test.ts is flaky on CI. Find out why.'],
      [
        'assistant',
        'The test waits on a 10 ms timer instead of the shipment promise, so it races on slow runners. I replaced the timer with `await shipment`.',
      ],
    ]);
    assert.equal(session.messages[0]?.occurredAt, '2026-10-02T14:00:01.000Z');
  });

  it('Codex CLI, older layout (header, record_type lines, bare items)', () => {
    const session = parseSession(fixture('codex-legacy.jsonl'));
    assert.equal(session.format, 'codex');
    assert.deepEqual(pairs(fixture('codex-legacy.jsonl')), [
      ['user', 'Rename the `cfg` variable to `config` in src/server.ts.'],
      ['assistant', 'Renamed `cfg` to `config` in src/server.ts (4 places).'],
    ]);
  });

  it('Codex CLI, older single-document JSON session', () => {
    const doc = JSON.stringify(
      {
        session: { id: 's', timestamp: '2025-04-01T10:00:00Z' },
        items: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
          { type: 'reasoning', summary: [] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
        ],
      },
      null,
      2,
    );
    assert.deepEqual(parseSession(doc).format, 'codex');
    assert.deepEqual(pairs(doc), [
      ['user', 'hello'],
      ['assistant', 'hi'],
    ]);
  });

  it('normalized events: latest revision wins, ordered by sequence, feedback skipped, offsets to UTC', () => {
    const session = parseSession(fixture('normalized.jsonl'));
    assert.equal(session.format, 'normalized');
    assert.deepEqual(session.messages, [
      { type: 'user_message', content: 'How do I export my invoices as CSV?', occurredAt: '2026-10-03T10:00:00.000Z' },
      { type: 'assistant_message', content: 'Go to Billing > Invoices and choose Export as CSV.', occurredAt: '2026-10-03T10:00:05.000Z' },
      { type: 'user_message', content: 'Thanks!', occurredAt: '2026-10-03T08:00:40.000Z' },
    ]);
  });

  it('normalized events as a JSON array or {events: [...]}, and out-of-order sequences', () => {
    const events = [
      { type: 'assistant_message', content: 'b', sequence: 2 },
      { type: 'user_message', content: 'a', sequence: 1 },
    ];
    assert.deepEqual(pairs(JSON.stringify(events, null, 1)), [
      ['user', 'a'],
      ['assistant', 'b'],
    ]);
    assert.deepEqual(pairs(JSON.stringify({ events }, null, 1)), [
      ['user', 'a'],
      ['assistant', 'b'],
    ]);
  });

  it('an explicit format is used as given', () => {
    assert.deepEqual(parseSession(fixture('codex.jsonl'), 'claude-code').messages, []);
    assert.equal(parseSession(fixture('normalized.jsonl'), 'normalized').messages.length, 3);
  });

  it('names every line that is not JSON or not an object', () => {
    const error = parseError(fixture('malformed.jsonl'));
    assert.equal(error.message, 'invalid JSON on line 2, 4');
    assert.deepEqual(error.lines, [2, 4]);
    const mixed = parseError('{"type":"user_message","content":"a"}\n[1]\n{oops\n\n42\n');
    assert.equal(mixed.message, 'invalid JSON on line 3; not a JSON object on line 2, 5');
    assert.deepEqual(mixed.lines, [2, 3, 5]);
    const many = parseError(Array.from({ length: 30 }, () => '{').join('\n'));
    assert.match(many.message, /^invalid JSON on line 1, 2, .*, 20, … \(30 lines\)$/);
  });

  it('normalized lines that are not events are named', () => {
    const error = parseError(
      '{"type":"user_message","content":"a"}\n{"type":"user_message"}\n{"type":"tool_call","content":"x"}\n',
      'normalized',
    );
    assert.match(error.message, /^not a normalized event .* on line 2, 3$/);
    assert.deepEqual(error.lines, [2, 3]);
  });

  it('empty files and unknown formats', () => {
    assert.equal(parseError('').message, 'the file is empty');
    assert.equal(parseError('\uFEFF \n\n').message, 'the file is empty');
    assert.match(parseError('{"hello":"world"}\n{"x":1}\n').message, /^could not detect the format \(claude-code, codex or normalized\)/);
  });

  it('drops NUL characters and lone surrogates that JSON escapes can carry (PostgreSQL stores neither)', () => {
    const content = ['{"type":"user_message","content":"a\\u0000b \\ud800c"}', '{"type":"assistant_message","content":"\\u0000"}'].join(
      '\n',
    );
    assert.deepEqual(pairs(content), [['user', 'ab \uFFFDc']]);
  });

  it('CRLF line endings and a byte order mark are read', () => {
    const content = '\uFEFF' + fixture('codex.jsonl').replace(/\n/g, '\r\n');
    assert.equal(parseSession(content).messages.length, 2);
  });

  describe('system reminders and the size of one message (issue 29, point 7)', () => {
    const user = (content: string) => JSON.stringify({ type: 'user', message: { role: 'user', content } });
    const assistant = (id: string, text: string) =>
      JSON.stringify({ type: 'assistant', message: { id, role: 'assistant', content: [{ type: 'text', text }] } });
    function tooLarge(content: string): AppError {
      try {
        parseSession(content);
      } catch (error) {
        assert.ok(error instanceof AppError, String(error));
        return error;
      }
      assert.fail('expected session_message_too_large');
    }

    it('removes exactly what /<system-reminder>[\\s\\S]*?<\\/system-reminder>/g removed', () => {
      // The regex the scan replaces, as the reference on short texts (where its cost does not matter).
      const reference = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
      const parts = ['<system-reminder>', '</system-reminder>', 'a', '\n', '<system-', 'reminder>', '</system-reminder', ' '];
      let seed = 7;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
      for (let i = 0; i < 5000; i += 1) {
        const text = Array.from({ length: next() % 12 }, () => parts[next() % parts.length]).join('');
        assert.equal(withoutReminders(text), text.replace(reference, ''), JSON.stringify(text));
      }
    });

    it('a 2.5 MB message of unclosed <system-reminder> openings is kept as written, and refused as too large', () => {
      const openings = '<system-reminder>x'.repeat(Math.ceil((2.5 * 1024 * 1024) / 18));
      assert.equal(withoutReminders(openings), openings);
      const text = `Before <system-reminder>hidden</system-reminder>after. ${openings}`;
      assert.equal(withoutReminders(text), `Before after. ${openings}`);
      const error = tooLarge(user(text));
      assert.equal(error.errorCode, 'session_message_too_large');
      assert.deepEqual(error.details, {
        message: 1,
        role: 'user',
        characters: `Before after. ${openings}`.length,
        limit: MAX_MESSAGE_CHARACTERS,
      });
      // Closed at the end: the first opening's reminder runs to that closing, and nothing is left.
      assert.deepEqual(pairs([user(`${openings}</system-reminder>`), user('next')].join('\n')), [['user', 'next']]);
      // Behind slash-command plumbing the whole turn is skipped.
      assert.deepEqual(pairs([user(`<command-name>/review</command-name>${openings}`), user('next')].join('\n')), [['user', 'next']]);
    });

    it(`a message holds at most ${MAX_MESSAGE_CHARACTERS} characters of text, in every format and once streamed parts are joined`, () => {
      const limit = 'a'.repeat(MAX_MESSAGE_CHARACTERS);
      assert.equal(parseSession([user('go'), assistant('m1', limit)].join('\n')).messages[1]?.content.length, MAX_MESSAGE_CHARACTERS);
      const over = tooLarge([user('go'), assistant('m1', `${limit}b`)].join('\n'));
      assert.equal(
        over.message,
        `Message 2 (assistant) has 1,048,577 characters of text; the limit is 1,048,576 a message. Remove it or shorten it, then upload again.`,
      );
      assert.equal(over.status, 413);
      const half = 'a'.repeat(MAX_MESSAGE_CHARACTERS / 2);
      assert.deepEqual(tooLarge([user('go'), assistant('m1', half), assistant('m1', half)].join('\n')).details, {
        message: 2,
        role: 'assistant',
        characters: MAX_MESSAGE_CHARACTERS + 2,
        limit: MAX_MESSAGE_CHARACTERS,
      });
      const normalized = JSON.stringify({ type: 'user_message', content: `${limit}b` });
      assert.deepEqual(tooLarge(normalized).details, {
        message: 1,
        role: 'user',
        characters: MAX_MESSAGE_CHARACTERS + 1,
        limit: MAX_MESSAGE_CHARACTERS,
      });
    });
  });
});
