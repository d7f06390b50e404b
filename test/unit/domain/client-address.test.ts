import { strict as assert } from 'node:assert';
import { rateLimitAddressKey } from '../../../src/domain/client-address.js';

describe('rate-limit key of a client address', () => {
  it('is an IPv6 address’s /64, however the address is spelled', () => {
    const key = '2001:db8:1:2::/64';
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2:a:b:c:d']) {
      assert.equal(rateLimitAddressKey(address), key, address);
    }
    assert.notEqual(rateLimitAddressKey('2001:db8:1:3::1'), key, 'the next /64 is another client');
    assert.equal(rateLimitAddressKey('fe80::1%eth0'), 'fe80::/64', 'a zone is not part of the key');
    assert.equal(rateLimitAddressKey('::1'), '::/64');
  });

  it('is an IPv4 address itself, an IPv4-mapped IPv6 address included', () => {
    assert.equal(rateLimitAddressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(rateLimitAddressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(rateLimitAddressKey('::ffff:cb00:7107'), '203.0.113.7');
    assert.notEqual(rateLimitAddressKey('203.0.113.8'), rateLimitAddressKey('203.0.113.7'));
  });

  it('keeps anything that is not an address as it is', () => {
    assert.equal(rateLimitAddressKey(''), '');
    assert.equal(rateLimitAddressKey('unknown'), 'unknown');
  });
});
