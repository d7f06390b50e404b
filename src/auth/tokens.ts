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
  /** The token's `jti`: what `intake token revoke --id` takes. */
  tokenId: string;
  expiresAt: string;
}

export interface VerifiedToken {
  userId: string;
  organizationId: string;
  tokenId: string | null;
  /** The user's token version it was issued under (0 for tokens issued before versions existed). */
  version: number;
  expiresAt: Date;
}

export type TokenFailure = 'expired' | 'invalid';

export class TokenService {
  private readonly key: Uint8Array;

  constructor(private readonly settings: TokenSettings) {
    this.key = deriveKey(settings.signingSecret, 'access-token');
  }

  async issue(
    user: { id: string; organizationId: string; tokenVersion?: number },
    ttlSeconds: number,
    now = new Date(),
  ): Promise<IssuedToken> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = issuedAt + ttlSeconds;
    const tokenId = crypto.randomUUID();
    const accessToken = await new SignJWT({ org: user.organizationId, ver: user.tokenVersion ?? 0 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(this.settings.issuer)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .setJti(tokenId)
      .sign(this.key);
    return { accessToken, tokenId, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }

  /** `currentDate`: to read a token that has expired (a revocation), verify as of an earlier date. */
  async verify(token: string, currentDate?: Date): Promise<VerifiedToken | TokenFailure> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.settings.issuer,
        audience: TOKEN_AUDIENCE,
        algorithms: ['HS256'],
        requiredClaims: ['sub', 'exp', 'org'],
        currentDate,
      });
      if (typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.exp !== 'number') return 'invalid';
      const version = payload.ver ?? 0;
      if (typeof version !== 'number' || !Number.isInteger(version)) return 'invalid';
      const tokenId = typeof payload.jti === 'string' ? payload.jti : null;
      return { userId: payload.sub, organizationId: payload.org, tokenId, version, expiresAt: new Date(payload.exp * 1000) };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return 'expired';
      return 'invalid';
    }
  }
}
