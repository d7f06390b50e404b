import { strict as assert } from 'node:assert';
import { KNOWN_DEVICE_DAYS, MAX_KNOWN_DEVICES, readKnownDevices, rememberDevice } from '../../../src/oauth/known-devices.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const DAY_MS = 86_400_000;
const cookie = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('known devices (the sign-in device cookie)', () => {
  it('remembers an account with a fresh id, and keeps that id (renewed) at its next sign-in', () => {
    const first = readKnownDevices(rememberDevice([], 'account-a', NOW), NOW);
    assert.equal(first.length, 1);
    assert.equal(first[0]!.account, 'account-a');
    assert.match(first[0]!.id, /^[\w-]{22}$/);
    assert.equal(first[0]!.expiresAt, NOW + KNOWN_DEVICE_DAYS * DAY_MS);
    const later = NOW + 10 * DAY_MS;
    const again = readKnownDevices(rememberDevice(first, 'account-a', later), later);
    assert.deepEqual(again, [{ account: 'account-a', id: first[0]!.id, expiresAt: later + KNOWN_DEVICE_DAYS * DAY_MS }]);
  });

  it('holds the most recently signed-in accounts, at most five', () => {
    let devices = readKnownDevices(undefined, NOW);
    for (let i = 0; i < MAX_KNOWN_DEVICES + 2; i++) devices = readKnownDevices(rememberDevice(devices, `account-${i}`, NOW), NOW);
    assert.deepEqual(
      devices.map((d) => d.account),
      ['account-6', 'account-5', 'account-4', 'account-3', 'account-2'],
    );
  });

  it('reads nothing from an expired, malformed or unreadable cookie', () => {
    assert.deepEqual(readKnownDevices(cookie([{ account: 'a', id: 'i', expiresAt: NOW - 1 }]), NOW), []);
    assert.deepEqual(readKnownDevices(cookie([{ account: 'a', id: 7, expiresAt: NOW + 1 }, null, 'x']), NOW), []);
    assert.deepEqual(readKnownDevices(cookie({ account: 'a', id: 'i', expiresAt: NOW + 1 }), NOW), []);
    assert.deepEqual(readKnownDevices('not base64url json', NOW), []);
    assert.deepEqual(readKnownDevices('', NOW), []);
  });
});
