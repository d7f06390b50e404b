import { createECDH, createHmac } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

/** The order of P-256's group. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * The authorization server's token-signing key (ES256), derived from SIGNING_SECRET for this
 * purpose alone, like the other keys (src/auth/secrets.ts deriveKey): every API replica derives the
 * same key, there is no further secret to distribute, and rotating SIGNING_SECRET rotates it (the
 * tokens it signed then stop verifying, which is what a rotation after a leak wants). The private
 * scalar is 64 derived bytes reduced into [1, n-1], which leaves no usable bias.
 */
export async function oauthSigningJwk(signingSecret: string): Promise<JWK & { kid: string }> {
  const bytes = Buffer.concat([1, 2].map((i) => createHmac('sha256', signingSecret).update(`intake:oauth-token-signing:${i}`).digest()));
  const d = (BigInt(`0x${bytes.toString('hex')}`) % (N - 1n)) + 1n;
  const dBytes = Buffer.from(d.toString(16).padStart(64, '0'), 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(dBytes);
  const pub = ecdh.getPublicKey();
  const jwk: JWK = { kty: 'EC', crv: 'P-256', x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33, 65).toString('base64url') };
  return { ...jwk, d: dBytes.toString('base64url'), alg: 'ES256', use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}
