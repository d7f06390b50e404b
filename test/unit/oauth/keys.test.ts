import { strict as assert } from 'node:assert';
import { SignJWT, importJWK, jwtVerify } from 'jose';
import { oauthSigningJwk } from '../../../src/oauth/keys.js';

describe("the authorization server's signing key", () => {
  it('is derived from SIGNING_SECRET: the same on every replica, another for another secret', async () => {
    const [a, b, c] = [await oauthSigningJwk('s'.repeat(40)), await oauthSigningJwk('s'.repeat(40)), await oauthSigningJwk('t'.repeat(40))];
    assert.deepEqual(a, b);
    assert.notEqual(a.d, c.d);
    assert.notEqual(a.kid, c.kid);
    assert.deepEqual({ kty: a.kty, crv: a.crv, alg: a.alg, use: a.use }, { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it('signs ES256 tokens that its public half (without d) verifies', async () => {
    const jwk = await oauthSigningJwk('a signing secret of at least 32 characters');
    const { d: _d, ...publicJwk } = jwk;
    const token = await new SignJWT({ scope: 'mcp' })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid })
      .setAudience('https://intake.example/mcp')
      .sign(await importJWK(jwk, 'ES256'));
    const { payload, protectedHeader } = await jwtVerify(token, await importJWK(publicJwk, 'ES256'), {
      audience: 'https://intake.example/mcp',
    });
    assert.equal(payload.scope, 'mcp');
    assert.equal(protectedHeader.kid, jwk.kid);
    const other = await oauthSigningJwk('another signing secret of 32 characters');
    const { d: _e, ...otherPublic } = other;
    await assert.rejects(jwtVerify(token, await importJWK(otherPublic, 'ES256')));
  });
});
