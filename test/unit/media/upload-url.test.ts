import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { UploadUrlSigner } from '../../../src/media/upload-url.js';

describe('upload URL tokens', () => {
  const signer = new UploadUrlSigner('test-signing-secret-test-signing-secret-0123456789');
  const id = randomUUID();

  it('is stable for one upload (an identical retry gets the same URL) and names it back', () => {
    assert.equal(signer.segment(id), signer.segment(id));
    assert.equal(signer.segment(id.toUpperCase()), signer.segment(id));
    assert.equal(signer.uploadIdOf(signer.segment(id)), id);
  });

  it("refuses a changed token, another upload's token, or a malformed segment", () => {
    const segment = signer.segment(id);
    const other = randomUUID();
    assert.equal(signer.uploadIdOf(`${segment.slice(0, -2)}xx`), null);
    assert.equal(signer.uploadIdOf(`${other}.${segment.split('.')[1]}`), null);
    for (const bad of ['', id, `${id}.`, 'nope.token', `../${id}.x`]) assert.equal(signer.uploadIdOf(bad), null, bad);
  });

  it('depends on the signing secret and differs from other purposes', () => {
    const other = new UploadUrlSigner('another-signing-secret-another-signing-secret-01');
    assert.notEqual(other.segment(id), signer.segment(id));
    assert.equal(other.uploadIdOf(signer.segment(id)), null);
    assert.match(signer.segment(id), /^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
  });
});
