import { strict as assert } from 'node:assert';
import { compileBody, compileQuery } from '../../../api/validation.js';
import { ValidationError } from '../../../src/errors.js';

describe('request validation', () => {
  const body = compileBody<{ name: string; tags?: string[] }>({
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } },
  });
  const query = compileQuery<{ page: number; limit: number }>({
    type: 'object',
    properties: { page: { type: 'integer', minimum: 1, default: 1 }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
  });

  function errorsOf(fn: () => unknown) {
    try {
      fn();
    } catch (error) {
      assert.ok(error instanceof ValidationError);
      return error.errors;
    }
    assert.fail('expected a ValidationError');
  }

  it('accepts a valid body unchanged', () => {
    assert.deepEqual(body({ name: 'x', tags: ['a'] }), { name: 'x', tags: ['a'] });
  });

  it('reports every error with a dotted path: missing, unknown, nested, enum', () => {
    const errors = errorsOf(() => body({ extra: 1, tags: ['c'] }));
    assert.deepEqual(
      [...errors].sort((x, y) => x.path.localeCompare(y.path)),
      [
        { path: 'body.extra', message: "unknown property 'extra'" },
        { path: 'body.name', message: "must have required property 'name'" },
        { path: 'body.tags.0', message: 'must be one of: a, b' },
      ],
    );
  });

  it('rejects a body that is not an object', () => {
    assert.deepEqual(
      errorsOf(() => body(undefined)),
      [{ path: 'body', message: 'must be object' }],
    );
  });

  it('coerces query strings, fills defaults and leaves the input untouched', () => {
    const input = { page: '3' };
    assert.deepEqual(query(input), { page: 3, limit: 50 });
    assert.deepEqual(input, { page: '3' });
    assert.deepEqual(
      errorsOf(() => query({ limit: '500' })),
      [{ path: 'query.limit', message: 'must be <= 100' }],
    );
  });
});

describe('NUL characters (PostgreSQL cannot store U+0000)', () => {
  const any = compileBody<unknown>({ type: 'object' });
  const query = compileQuery<unknown>({ type: 'object', properties: { email: { type: 'string' } } });

  it('are a validation error wherever they are: strings, nested values, keys, query strings', () => {
    try {
      any({ name: 'a\u0000b', nested: { list: ['ok', 'x\u0000'] }, ['k\u0000']: 1 });
      assert.fail('expected a ValidationError');
    } catch (error) {
      assert.ok(error instanceof ValidationError);
      assert.deepEqual(
        error.errors.map((e) => e.path),
        ['body.name', 'body.nested.list.1', 'body'],
      );
      assert.equal(error.errors[0]?.message, 'must not contain the NUL character (U+0000)');
    }
    assert.throws(() => query({ email: 'a\u0000@b.co' }), ValidationError);
    assert.deepEqual(any({ name: 'fine \\u0000 as text' }), { name: 'fine \\u0000 as text' });
  });
});
