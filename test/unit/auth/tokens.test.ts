import { strict as assert } from 'node:assert';
import { SignJWT } from 'jose';
import { deriveKey } from '../../../src/auth/secrets.js';
import { TOKEN_AUDIENCE, TokenService } from '../../../src/auth/tokens.js';

const SECRET = 'unit-test-signing-secret-0123456789-abcdef';
const user = { id: '0b6f8e52-1111-4c1c-9e59-2f1b4f6a9a01', organizationId: '9d8c3a10-2222-4a2b-8c3d-4e5f6a7b8c9d' };

describe('user access tokens', () => {
  const tokens = new TokenService({ signingSecret: SECRET, issuer: 'intake' });

  it('issues a token that verifies to its user and organization, with the expiry it announces', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const issued = await tokens.issue(user, 600, now);
    assert.equal(issued.expiresAt, '2026-01-01T00:10:00.000Z');
    const fresh = await tokens.issue({ ...user, tokenVersion: 3 }, 600);
    assert.deepEqual(await tokens.verify(fresh.accessToken), {
      userId: user.id,
      organizationId: user.organizationId,
      tokenId: fresh.tokenId,
      version: 3,
      expiresAt: new Date(fresh.expiresAt),
    });
  });

  it('reports an expired token as expired', async () => {
    const old = await tokens.issue(user, 60, new Date(Date.now() - 120_000));
    assert.equal(await tokens.verify(old.accessToken), 'expired');
  });

  it('rejects a token signed with another secret, another issuer, or garbage', async () => {
    const other = new TokenService({ signingSecret: `${SECRET}-other`, issuer: 'intake' });
    assert.equal(await tokens.verify((await other.issue(user, 60)).accessToken), 'invalid');
    const otherIssuer = new TokenService({ signingSecret: SECRET, issuer: 'someone-else' });
    assert.equal(await tokens.verify((await otherIssuer.issue(user, 60)).accessToken), 'invalid');
    assert.equal(await tokens.verify('not.a.jwt'), 'invalid');
  });

  it('refuses the "none" algorithm and tokens without the organization claim', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(
      JSON.stringify({ sub: user.id, org: user.organizationId, iss: 'intake', aud: TOKEN_AUDIENCE, exp: 9_999_999_999 }),
    ).toString('base64url');
    assert.equal(await tokens.verify(`${header}.${body}.`), 'invalid');
    const noOrg = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer('intake')
      .setAudience(TOKEN_AUDIENCE)
      .setExpirationTime('5m')
      .sign(deriveKey(SECRET, 'access-token'));
    assert.equal(await tokens.verify(noOrg), 'invalid');
  });

  it('derives different keys for different purposes', () => {
    assert.notDeepEqual(deriveKey(SECRET, 'access-token'), deriveKey(SECRET, 'upload-url'));
  });
});
