import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { ImportRefused, ndjsonLines } from '../../../src/lifecycle/import.js';

const collect = async (chunks: (Buffer | string)[], max?: number) => {
  const lines: string[] = [];
  for await (const line of ndjsonLines(Readable.from(chunks), max)) lines.push(line);
  return lines;
};

/** The import's line reader (issue 32): lines across chunk boundaries, bounded in length. */
describe('ndjsonLines', () => {
  it('joins lines split across chunks, characters split across chunks included, and keeps a last line without newline', async () => {
    const text = Buffer.from('{"a":"é€"}\n{"b":2}\n{"c":3}');
    // Every byte its own chunk: "é" and "€" are split between chunks.
    const chunks = [...text].map((b) => Buffer.from([b]));
    assert.deepEqual(await collect(chunks), ['{"a":"é€"}', '{"b":2}', '{"c":3}']);
    assert.deepEqual(await collect(['x\n\ny\n']), ['x', '', 'y']);
  });

  it('refuses a line longer than the limit, whether it ends in the chunk or not', async () => {
    await assert.rejects(
      collect(['ok\n', 'x'.repeat(11), '\n'], 10),
      (e: Error) => e instanceof ImportRefused && e.message === 'line 2 is longer than 10 characters',
    );
    await assert.rejects(
      collect([`ok\n${'x'.repeat(11)}\nok\n`], 10),
      (e: Error) => e instanceof ImportRefused && e.message === 'line 2 is longer than 10 characters',
    );
    assert.deepEqual(await collect([`${'x'.repeat(10)}\n`], 10), ['x'.repeat(10)]);
  });
});
