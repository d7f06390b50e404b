import { strict as assert } from 'node:assert';
import { checkFieldValues, isCalendarDate, isInstant, MAX_VALUE_BYTES, valueMismatch } from '../../../src/domain/feedback-fields.js';

describe('feedback field values', () => {
  it('knows calendar dates, leap years included', () => {
    assert.equal(isCalendarDate('2024-02-29'), true);
    assert.equal(isCalendarDate('2023-02-29'), false);
    assert.equal(isCalendarDate('2023-13-01'), false);
    assert.equal(isCalendarDate('2023-1-01'), false);
  });

  it('wants an instant with an offset', () => {
    assert.equal(isInstant('2026-11-01T10:00:00Z'), true);
    assert.equal(isInstant('2026-11-01T10:00:00.123456+05:30'), true);
    assert.equal(isInstant('2026-11-01T10:00Z'), true);
    assert.equal(isInstant('2026-11-01T10:00:00'), false);
    assert.equal(isInstant('2026-02-30T10:00:00Z'), false);
    assert.equal(isInstant('2026-11-01T25:00:00Z'), false);
  });

  it('matches values to types', () => {
    assert.equal(valueMismatch('integer', 9_007_199_254_740_991), null);
    assert.notEqual(valueMismatch('integer', 9_007_199_254_740_992), null);
    assert.equal(valueMismatch('float', 3), null);
    assert.equal(valueMismatch('json', null), null);
    assert.equal(valueMismatch('json', [1, { a: 'b' }]), null);
    assert.notEqual(valueMismatch('boolean', null), null);
    assert.notEqual(valueMismatch('string', null), null);
  });

  it("measures a string value's UTF-8 bytes, without JSON's quotes and escapes", () => {
    const euro = '€'.repeat(Math.floor(MAX_VALUE_BYTES / 3)); // 3 bytes each
    assert.deepEqual(checkFieldValues([{ category: 'content', type: 'string', name: 'b', value: euro }]), []);
    const errors = checkFieldValues([{ category: 'content', type: 'string', name: 'b', value: `${euro}€` }]);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.path, 'body.fields.0.value');
    // Quotes would be escaped in JSON (two bytes each): the value is still 10,240 bytes.
    assert.deepEqual(checkFieldValues([{ category: 'content', type: 'string', name: 'q', value: '"'.repeat(MAX_VALUE_BYTES) }]), []);
  });
});
