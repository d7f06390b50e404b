import { strict as assert } from 'node:assert';
import {
  missingSpeakers,
  toMonologues,
  TRANSCRIPT_LIMITS,
  transcriptErrors,
  transcriptLimitError,
  type TranscriptEntry,
  type Utterance,
} from '../../../src/domain/transcript.js';

function u(startSec: number, endSec: number, speaker: number, text = 'Hello.'): Utterance {
  return { startSec, endSec, speaker, text };
}

/** `count` back-to-back one-second utterances alternating between two speakers. */
function alternating(count: number, text = 'x'): Utterance[] {
  return Array.from({ length: count }, (_, i) => u(i, i + 1, i % 2, text));
}

const RECORDING = '6f1c2b9e-0d4a-4c3e-9a51-2f7d1e8b3c40';

function entry(startSec: number, endSec: number, speaker: number, text: string): TranscriptEntry {
  return { recordingId: RECORDING, startSec, endSec, speaker, text };
}

describe('transcript rules', () => {
  describe('transcriptErrors', () => {
    it('accepts an ordered transcript, equal starts included', () => {
      assert.deepEqual(transcriptErrors([u(0, 2, 0), u(0, 1, 1), u(2, 3, 0), u(2.5, 2.5, 1)]), []);
      assert.deepEqual(transcriptErrors([]), []);
    });

    it('wants utterances ordered by startSec', () => {
      assert.deepEqual(transcriptErrors([u(0, 1, 0), u(5, 6, 1), u(4, 5, 2)]), [
        { path: 'body.transcript.utterances.2.startSec', message: 'must not be before the startSec of the previous utterance' },
      ]);
    });

    it('wants endSec at least startSec', () => {
      const errors = transcriptErrors([u(3, 2, 0)]);
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.transcript.utterances.0.endSec'],
      );
      assert.deepEqual(transcriptErrors([u(3, 3, 0)]), []);
    });

    it('refuses blank text', () => {
      for (const text of ['', '   ', '\t\n', '\u00a0']) {
        const errors = transcriptErrors([u(0, 1, 0, text)]);
        assert.deepEqual(
          errors.map((e) => e.path),
          ['body.transcript.utterances.0.text'],
          JSON.stringify(text),
        );
      }
      assert.deepEqual(transcriptErrors([u(0, 1, 0, ' a ')]), []);
    });

    it('limits an utterance to 20,000 characters', () => {
      assert.equal(TRANSCRIPT_LIMITS.characters, 20_000);
      assert.deepEqual(transcriptErrors([u(0, 1, 0, 'a'.repeat(20_000))]), []);
      const errors = transcriptErrors([u(0, 1, 0, 'b'.repeat(20_001))]);
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.transcript.utterances.0.text'],
      );
    });

    it('lets a speaker start when their previous utterance ends, not before', () => {
      assert.deepEqual(transcriptErrors([u(0, 2, 0), u(2, 3, 0)]), []);
      const errors = transcriptErrors([u(0, 2, 0), u(1.5, 3, 0)]);
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.transcript.utterances.1.startSec'],
      );
      assert.match(errors[0]!.message, /overlap/);
    });

    it('catches an overlap with any earlier utterance of the same speaker', () => {
      const errors = transcriptErrors([u(0, 10, 0), u(1, 2, 1), u(5, 6, 0), u(8, 12, 0)]);
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.transcript.utterances.2.startSec', 'body.transcript.utterances.3.startSec'],
      );
    });

    it('lets different speakers overlap', () => {
      assert.deepEqual(transcriptErrors([u(0, 5, 0), u(1, 4, 1), u(2, 6, 2), u(5, 7, 0)]), []);
    });

    it('reports several problems of one utterance with their fields', () => {
      const errors = transcriptErrors([u(5, 9, 0), u(4, 3, 0, ' ')]);
      assert.deepEqual(
        errors.map((e) => e.path),
        [
          'body.transcript.utterances.1.startSec',
          'body.transcript.utterances.1.startSec',
          'body.transcript.utterances.1.endSec',
          'body.transcript.utterances.1.text',
        ],
      );
    });

    it('stops at 50 errors', () => {
      const blank = Array.from({ length: 200 }, (_, i) => u(i, i + 1, 0, ''));
      const errors = transcriptErrors(blank);
      assert.equal(errors.length, 50);
      assert.equal(errors[49]?.path, 'body.transcript.utterances.49.text');
      const many = Array.from({ length: 30 }, () => u(5, 1, 0, ' '));
      assert.equal(transcriptErrors(many).length, 50);
      assert.equal(transcriptErrors(blank.slice(0, 49)).length, 49);
    });

    it('validates the maximum number of utterances', () => {
      assert.deepEqual(transcriptErrors(alternating(TRANSCRIPT_LIMITS.utterances)), []);
      // Each row now ends after the next row of its speaker starts: every row from index 2 overlaps.
      const crowded = alternating(TRANSCRIPT_LIMITS.utterances).map((row) => ({ ...row, endSec: row.endSec + 2 }));
      const errors = transcriptErrors(crowded);
      assert.equal(errors.length, 50);
      assert.equal(errors[0]?.path, 'body.transcript.utterances.2.startSec');
    });
  });

  describe('transcriptLimitError', () => {
    it('allows 10,000 utterances and refuses 10,001', () => {
      assert.equal(transcriptLimitError({ utterances: alternating(10_000) }), null);
      assert.equal(transcriptLimitError({ utterances: alternating(10_001) }), 'too_many_utterances');
      assert.equal(transcriptLimitError(alternating(10_001)), 'too_many_utterances');
    });

    it('allows 2,000,000 characters in total and refuses 2,000,001', () => {
      const rows = alternating(100, 'a'.repeat(20_000));
      assert.equal(transcriptLimitError({ utterances: rows }), null);
      assert.equal(transcriptLimitError({ utterances: [...rows, u(100, 101, 0, 'z')] }), 'transcript_too_large');
      assert.equal(transcriptLimitError(rows), null);
    });

    it('counts JavaScript string length', () => {
      const astral = '😀'.repeat(10_000); // 20,000 UTF-16 code units
      const rows = alternating(100, astral);
      assert.equal(transcriptLimitError({ utterances: rows }), null);
      assert.equal(transcriptLimitError({ utterances: [...rows, u(100, 101, 0, '😀')] }), 'transcript_too_large');
    });

    it('prefers too_many_utterances when both limits are exceeded', () => {
      const rows = alternating(10_001, 'a'.repeat(300));
      assert.equal(transcriptLimitError({ utterances: rows }), 'too_many_utterances');
    });

    it('ignores what it cannot count', () => {
      for (const raw of [undefined, null, 'text', 42, {}, { utterances: 'many' }, { utterances: null }]) {
        assert.equal(transcriptLimitError(raw), null, JSON.stringify(raw));
      }
      const odd = [null, 7, 'string', [], { text: 5 }, { text: null }, {}, { text: 'a'.repeat(2_000_000) }];
      assert.equal(transcriptLimitError({ utterances: odd }), null);
      assert.equal(transcriptLimitError({ utterances: [...odd, { text: 'b' }] }), 'transcript_too_large');
    });
  });

  describe('missingSpeakers', () => {
    it('lists participant speakers that never speak, once each', () => {
      const utterances = [u(0, 1, 0), u(1, 2, 2), u(2, 3, 7)];
      assert.deepEqual(missingSpeakers([0, 1, 2, 3, 1], utterances), [1, 3]);
      assert.deepEqual(missingSpeakers([7, 0], utterances), []);
    });

    it('ignores utterance speakers without a participant', () => {
      assert.deepEqual(missingSpeakers([], [u(0, 1, 4)]), []);
      assert.deepEqual(missingSpeakers([4], []), [4]);
    });
  });

  describe('toMonologues', () => {
    it('merges contiguous rows of one speaker', () => {
      const rows = [entry(0, 2, 0, 'Hi.'), entry(2, 3, 0, 'How are you?'), entry(3, 5, 1, 'Fine.'), entry(5, 6, 1, 'Thanks.')];
      assert.deepEqual(toMonologues(rows), [entry(0, 3, 0, 'Hi. How are you?'), entry(3, 6, 1, 'Fine. Thanks.')]);
    });

    it('does not merge across another speaker', () => {
      const rows = [entry(0, 1, 0, 'A'), entry(1, 2, 1, 'B'), entry(2, 3, 0, 'C')];
      assert.deepEqual(toMonologues(rows), rows);
    });

    it('ends a block at its latest end', () => {
      const rows = [entry(0, 10, 0, 'long'), entry(1, 2, 0, 'short'), entry(2, 3, 1, 'other')];
      assert.deepEqual(toMonologues(rows), [entry(0, 10, 0, 'long short'), entry(2, 3, 1, 'other')]);
    });

    it('keeps a single row and an empty list as they are', () => {
      assert.deepEqual(toMonologues([entry(1, 2, 3, 'Solo.')]), [entry(1, 2, 3, 'Solo.')]);
      assert.deepEqual(toMonologues([]), []);
    });

    it('does not change its input', () => {
      const rows = [entry(0, 1, 0, 'A'), entry(1, 2, 0, 'B')];
      const copy = structuredClone(rows);
      const blocks = toMonologues(rows);
      assert.deepEqual(rows, copy);
      assert.notEqual(blocks[0], rows[0]);
      assert.equal(blocks[0]?.recordingId, RECORDING);
    });
  });
});
