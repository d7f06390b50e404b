import * as oidc from 'openid-client';
import type { DatabasePool } from 'slonik';
import type { OidcSignInConfig } from '../config.js';
import { findActiveUsersByEmail, linkIdentity, signInByIdentity } from '../db/repositories/user-identities.js';

/** What the browser keeps (in a signed cookie) between leaving for the provider and coming back. */
export interface UpstreamState {
  /** The authorization server's interaction this sign-in belongs to. */
  uid: string;
  state: string;
  nonce: string;
  verifier: string;
}

export type UpstreamOutcome = { kind: 'signed-in'; userId: string } | { kind: 'refused'; reason: string };

/** Sign-in at a company's OpenID Connect provider (OIDC_ISSUER), for the authorization server's pages. */
export interface UpstreamSignIn {
  displayName: string;
  /** Where the provider sends the browser back: `<issuer>/oauth/upstream/callback`, registered there. */
  redirectUri: string;
  /** The origins the browser is sent to (the sign-in page's CSP `form-action`): the issuer's, and its authorization endpoint's once discovered. */
  formTargets(): string[];
  /** The provider's authorization URL for this interaction, and what the browser must bring back. */
  begin(uid: string): Promise<{ url: URL; state: UpstreamState }>;
  /** Redeems the code the provider sent back and finds the Intake user the identity signs in as. */
  complete(callback: URL, state: UpstreamState): Promise<UpstreamOutcome>;
}

/** The provider could not be reached or answered wrongly (discovery, the token request, a bad ID token). */
export class UpstreamUnavailableError extends Error {}

const isLoopback = (url: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);

/**
 * openid-client (certified, by oidc-provider's author) against the configured provider: the code
 * flow with PKCE, state and nonce; the ID token's signature, issuer, audience and nonce are checked
 * by the library. An identity signs in as the Intake user it was linked to at its first sign-in;
 * the first time, by its e-mail address, which the provider must say is verified and which must
 * belong to exactly one active Intake user. Nobody is created: an administrator creates users.
 * Discovery happens at the first sign-in (and again after a failure), so the API starts without
 * the provider.
 */
export function upstreamSignIn(o: OidcSignInConfig & { redirectUri: string; pool: DatabasePool }): UpstreamSignIn {
  const issuer = new URL(o.issuer);
  let discovered: Promise<oidc.Configuration> | undefined;
  let authorizationOrigin: string | undefined;
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= oidc.discovery(issuer, o.clientId, o.clientSecret, undefined, {
      // Plain HTTP only for a provider on this machine (development, tests).
      execute: isLoopback(issuer) && issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      timeout: 10,
    }).then((config) => {
      const endpoint = config.serverMetadata().authorization_endpoint;
      if (endpoint) authorizationOrigin = new URL(endpoint).origin;
      return config;
    }, (error: unknown) => {
      discovered = undefined;
      throw new UpstreamUnavailableError(`OpenID Connect discovery at ${o.issuer} failed: ${(error as Error).message}`);
    });
    return discovered;
  };

  // Discovered ahead of the first sign-in when the provider answers (a failure is tried again then).
  configuration().catch(() => undefined);
  return {
    displayName: o.displayName,
    redirectUri: o.redirectUri,
    formTargets: () => [issuer.origin, ...(authorizationOrigin && authorizationOrigin !== issuer.origin ? [authorizationOrigin] : [])],
    async begin(uid) {
      const config = await configuration();
      const state: UpstreamState = { uid, state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: o.redirectUri, scope: 'openid email', state: state.state, nonce: state.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(state.verifier), code_challenge_method: 'S256',
      });
      return { url, state };
    },
    async complete(callback, state) {
      const config = await configuration();
      let claims: oidc.IDToken;
      let accessToken: string;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: state.verifier, expectedState: state.state, expectedNonce: state.nonce, idTokenExpected: true,
        });
        claims = tokens.claims()!;
        accessToken = tokens.access_token;
      } catch (error) {
        // A response that does not check out (state, nonce, signature) is a refusal; the provider failing is not.
        if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError) {
          return { kind: 'refused', reason: `The sign-in at ${o.displayName} did not complete (${error.error}).` };
        }
        if (error instanceof oidc.ClientError) return { kind: 'refused', reason: `The sign-in at ${o.displayName} could not be checked.` };
        throw new UpstreamUnavailableError(`OpenID Connect token request to ${o.issuer} failed: ${(error as Error).message}`);
      }
      const linked = await signInByIdentity(o.pool, claims.iss, claims.sub);
      if (linked) {
        return linked.status === 'active' ? { kind: 'signed-in', userId: linked.id } : { kind: 'refused', reason: 'This Intake account is disabled.' };
      }
      // The first sign-in of this identity: by its verified e-mail address, from the ID token or the userinfo endpoint.
      let email = claims.email;
      let verified = claims.email_verified;
      if (typeof email !== 'string') {
        const info = await oidc.fetchUserInfo(config, accessToken, claims.sub).catch(() => undefined);
        email = info?.email;
        verified = info?.email_verified;
      }
      if (typeof email !== 'string' || verified !== true) {
        return { kind: 'refused', reason: `${o.displayName} did not confirm an e-mail address for this account.` };
      }
      const users = await findActiveUsersByEmail(o.pool, email);
      if (users.length === 0) return { kind: 'refused', reason: `No Intake account uses ${email}. Ask your administrator to create one.` };
      if (users.length > 1) return { kind: 'refused', reason: `${email} belongs to several Intake accounts. Ask your administrator to sign you in with a password.` };
      await linkIdentity(o.pool, claims.iss, claims.sub, users[0]!.id);
      const user = await signInByIdentity(o.pool, claims.iss, claims.sub);
      return user?.status === 'active' ? { kind: 'signed-in', userId: user.id } : { kind: 'refused', reason: 'This Intake account is disabled.' };
    },
  };
}
