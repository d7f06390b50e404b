import { strict as assert } from 'node:assert';
import { freePort } from '../../../src/dev/net.js';

describe('freePort (src/dev/net.ts)', () => {
  it('never hands out one port twice in a process, though the OS gives just-closed ports again (about 1 in 8 of 2,000 binds here)', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 2000; i++) ports.push(await freePort());
    ports.push(...(await Promise.all(Array.from({ length: 200 }, () => freePort()))));
    assert.equal(new Set(ports).size, ports.length);
    for (const port of ports) assert.ok(port > 0 && port < 65536, String(port));
  });
});
