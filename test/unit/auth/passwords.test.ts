import { strict as assert } from 'node:assert';
import { hashPassword, passwordProblem, PASSWORD_MAX_LENGTH, verifyPassword } from '../../../src/auth/passwords.js';

describe('sign-in passwords', () => {
  it('asks for length: 12 to 256 characters (counted as characters, not bytes)', () => {
    assert.match(passwordProblem('short pass')!, /at least 12/);
    assert.equal(passwordProblem('correct horse'), null);
    assert.equal(passwordProblem('é'.repeat(12)), null, 'twelve characters of two bytes each');
    assert.equal(passwordProblem('x'.repeat(PASSWORD_MAX_LENGTH)), null);
    assert.match(passwordProblem('x'.repeat(PASSWORD_MAX_LENGTH + 1))!, /at most 256/);
  });

  it('stores argon2id (19 MiB, 2 passes) with a salt of its own: the same password hashes differently', async () => {
    const [a, b] = [await hashPassword('correct horse battery'), await hashPassword('correct horse battery')];
    assert.match(a, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.notEqual(a, b);
    assert.ok(!a.includes('correct horse'));
  });

  it('verifies the password and nothing else; a composed and a decomposed accent are the same password', async () => {
    const stored = await hashPassword('caf\u00e9 au lait, s\u2019il vous pla\u00eet');
    assert.equal(await verifyPassword(stored, 'caf\u00e9 au lait, s\u2019il vous pla\u00eet'), true);
    assert.equal(await verifyPassword(stored, 'cafe\u0301 au lait, s\u2019il vous pla\u00eet'), true);
    assert.equal(await verifyPassword(stored, 'cafe au lait, s\u2019il vous plait'), false);
    assert.equal(await verifyPassword(stored, ''), false);
  });

  it('answers false for no stored hash and for a malformed one, after the same work', async () => {
    assert.equal(await verifyPassword(null, 'whatever password'), false);
    assert.equal(await verifyPassword('not a phc string', 'whatever password'), false);
    assert.equal(await verifyPassword(await hashPassword('x'.repeat(20)), 'x'.repeat(PASSWORD_MAX_LENGTH * 4 + 1)), false);
  });
});
