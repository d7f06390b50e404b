import { strict as assert } from 'node:assert';
import { displayPrefix, generateSecret, hashSecret } from '../../../src/auth/secrets.js';
import { isScope, SCOPES, scopesForRole } from '../../../src/auth/scopes.js';

describe('secrets and scopes', () => {
  it('generates distinct prefixed secrets of 256 bits and hashes them stably', () => {
    const a = generateSecret('ik');
    const b = generateSecret('ik');
    assert.match(a, /^ik_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b);
    assert.deepEqual(hashSecret(a), hashSecret(a));
    assert.notDeepEqual(hashSecret(a), hashSecret(b));
    assert.equal(displayPrefix(a), a.slice(0, 9));
  });

  it('gives members every data scope and admins also admin', () => {
    assert.deepEqual(scopesForRole('admin'), [...SCOPES]);
    assert.ok(!scopesForRole('member').includes('admin'));
    assert.ok(scopesForRole('member').includes('feedback:write'));
    assert.equal(isScope('recordings:write'), true);
    assert.equal(isScope('root'), false);
  });
});
