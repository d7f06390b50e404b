import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, parsePayloadKeys } from '../../../src/temporal/codec.js';

const key = (id: string) => ({ id, key: new Uint8Array(randomBytes(32)) });

describe('payload encryption codec', () => {
  const secret = { joinUrl: 'https://zoom.us/j/84211234567?pwd=SuperSecretPass1' };
  const payload = defaultPayloadConverter.toPayload(secret);

  it('encrypts with the first key, names it, and decodes back to the same payload', async () => {
    const codec = new EncryptionCodec([key('k2'), key('k1')]);
    const [encoded] = await codec.encode([payload]);
    assert.equal(new TextDecoder().decode(encoded!.metadata!.encoding), 'binary/encrypted');
    assert.equal(new TextDecoder().decode(encoded!.metadata!['encryption-key-id']), 'k2');
    assert.ok(!Buffer.from(encoded!.data!).includes('SuperSecretPass1'), 'no plaintext');
    const [decoded] = await codec.decode([encoded!]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded!), secret);
    const [again] = await codec.encode([payload]);
    assert.notDeepEqual(Buffer.from(again!.data!), Buffer.from(encoded!.data!), 'a fresh IV each time');
  });

  it('rotates: payloads of an older key still decode once a new key is put first', async () => {
    const old = key('2026-01');
    const [encoded] = await new EncryptionCodec([old]).encode([payload]);
    const rotated = new EncryptionCodec([key('2026-11'), old]);
    assert.deepEqual(defaultPayloadConverter.fromPayload((await rotated.decode([encoded!]))[0]!), secret);
    await assert.rejects(new EncryptionCodec([key('2026-11')]).decode([encoded!]), /unknown key id "2026-01"/);
  });

  it('refuses a tampered payload, and passes payloads written before encryption through', async () => {
    const codec = new EncryptionCodec([key('k')]);
    const [encoded] = await codec.encode([payload]);
    const data = Buffer.from(encoded!.data!);
    data[20] = data[20]! ^ 1;
    await assert.rejects(codec.decode([{ ...encoded!, data }]));
    assert.deepEqual(await codec.decode([payload]), [payload]);
  });

  it('reads TEMPORAL_PAYLOAD_KEYS and names what is wrong', () => {
    const a = randomBytes(32).toString('base64');
    const keys = parsePayloadKeys(`new:${a}, old:${randomBytes(32).toString('base64')}`);
    assert.ok(Array.isArray(keys));
    assert.deepEqual(
      keys.map((k) => k.id),
      ['new', 'old'],
    );
    assert.match(parsePayloadKeys(`k:${randomBytes(16).toString('base64')}`) as string, /must be 32 bytes/);
    assert.match(parsePayloadKeys('no-colon') as string, /id:base64/);
    assert.match(parsePayloadKeys(`k:${a},k:${a}`) as string, /listed twice/);
  });
});
