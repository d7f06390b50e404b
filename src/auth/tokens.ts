import { errors, jwtVerify, SignJWT } from 'jose';
import { deriveKey } from './secrets.js';

/** User access tokens: HS256 JWTs issued by this service (`intake token issue`). */
export const TOKEN_AUDIENCE = 'intake-api';

export interface TokenSettings {
  signingSecret: string;
  issuer: string;
}

export interface IssuedToken {
  accessToken: string;
  expiresAt: string;
}

export interface VerifiedToken {
  userId: string;
  organizationId: string;
}

export type TokenFailure = 'expired' | 'invalid';

export class TokenService {
  private readonly key: Uint8Array;

  constructor(private readonly settings: TokenSettings) {
    this.key = deriveKey(settings.signingSecret, 'access-token');
  }

  async issue(user: { id: string; organizationId: string }, ttlSeconds: number, now = new Date()): Promise<IssuedToken> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = issuedAt + ttlSeconds;
    const accessToken = await new SignJWT({ org: user.organizationId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(this.settings.issuer)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .setJti(crypto.randomUUID())
      .sign(this.key);
    return { accessToken, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }

  async verify(token: string): Promise<VerifiedToken | TokenFailure> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.settings.issuer,
        audience: TOKEN_AUDIENCE,
        algorithms: ['HS256'],
        requiredClaims: ['sub', 'exp', 'org'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.org !== 'string') return 'invalid';
      return { userId: payload.sub, organizationId: payload.org };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return 'expired';
      return 'invalid';
    }
  }
}
