import { setTimeout as sleep } from 'node:timers/promises';
import * as oidc from 'openid-client';
import type { DatabasePool } from 'slonik';
import type { OidcSignInConfig } from '../config.js';
import { findActiveUsersByEmail, hasIdentityAt, linkIdentity, signInByIdentity } from '../db/repositories/user-identities.js';
import type { UserRow } from '../db/repositories/users.js';

/** What the browser keeps (in a signed cookie) between leaving for the provider and coming back. */
export interface UpstreamState {
  /** The authorization server's interaction this sign-in belongs to. */
  uid: string;
  state: string;
  nonce: string;
  verifier: string;
}

/** `reason` is shown to the person; `detail` (what the library said) is logged only. */
export type UpstreamOutcome = { kind: 'signed-in'; userId: string } | { kind: 'refused'; reason: string; detail?: string };

/** openid-client's codes for a response that does not check out (a refusal, not an outage). */
const REFUSED_CODES = new Set([
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_INVALID_REQUEST',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_AUTHORIZATION_RESPONSE_ERROR',
  'OAUTH_RESPONSE_BODY_ERROR',
]);
/** How long a sign-in page waits for discovery to learn the provider's authorization endpoint (for its CSP). */
const FORM_TARGETS_WAIT_MS = 2000;

/** Sign-in at a company's OpenID Connect provider (OIDC_ISSUER), for the authorization server's pages. */
export interface UpstreamSignIn {
  displayName: string;
  /** Where the provider sends the browser back: `<issuer>/oauth/upstream/callback`, registered there. */
  redirectUri: string;
  /** The origins the browser is sent to (the sign-in page's CSP `form-action`): the issuer's and its authorization endpoint's. */
  formTargets(): Promise<string[]>;
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
 * belong to exactly one active user of the organizations this provider serves (OIDC_ORGANIZATIONS),
 * one without an identity at this provider yet. Nobody is created: an administrator creates users.
 * Discovery happens at the first sign-in (and again after a failure), so the API starts without
 * the provider.
 */
export function upstreamSignIn(o: OidcSignInConfig & { redirectUri: string; pool: DatabasePool }): UpstreamSignIn {
  const issuer = new URL(o.issuer);
  let discovered: Promise<oidc.Configuration> | undefined;
  let authorizationOrigin: string | undefined;
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= oidc
      .discovery(issuer, o.clientId, o.clientSecret, undefined, {
        // Plain HTTP only for a provider on this machine (development, tests).
        execute: isLoopback(issuer) && issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
        timeout: 10,
      })
      .then(
        (config) => {
          const endpoint = config.serverMetadata().authorization_endpoint;
          if (endpoint) authorizationOrigin = new URL(endpoint).origin;
          return config;
        },
        (error: unknown) => {
          discovered = undefined;
          throw new UpstreamUnavailableError(`OpenID Connect discovery at ${o.issuer} failed: ${(error as Error).message}`);
        },
      );
    return discovered;
  };

  // Discovered ahead of the first sign-in when the provider answers (a failure is tried again then).
  configuration().catch(() => undefined);
  return {
    displayName: o.displayName,
    redirectUri: o.redirectUri,
    async formTargets() {
      if (!authorizationOrigin) {
        // Discovery not done yet (the provider was down): wait for it a little, never long.
        await Promise.race([configuration().catch(() => undefined), sleep(FORM_TARGETS_WAIT_MS)]);
      }
      return [issuer.origin, ...(authorizationOrigin && authorizationOrigin !== issuer.origin ? [authorizationOrigin] : [])];
    },
    async begin(uid) {
      const config = await configuration();
      const state: UpstreamState = { uid, state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: o.redirectUri,
        scope: 'openid email',
        state: state.state,
        nonce: state.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(state.verifier),
        code_challenge_method: 'S256',
      });
      return { url, state };
    },
    async complete(callback, state) {
      const config = await configuration();
      let claims: oidc.IDToken;
      let accessToken: string;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: state.verifier,
          expectedState: state.state,
          expectedNonce: state.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims()!;
        accessToken = tokens.access_token;
      } catch (error) {
        // A response that does not check out (state, nonce, signature, an error the provider sent) is a refusal; the provider failing is not.
        if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError) {
          return { kind: 'refused', reason: `The sign-in at ${o.displayName} did not complete (${error.error}).`, detail: error.message };
        }
        if (error instanceof oidc.ClientError && error.code && REFUSED_CODES.has(error.code)) {
          return {
            kind: 'refused',
            reason: `The sign-in at ${o.displayName} could not be checked.`,
            detail: `${error.code}: ${error.message}`,
          };
        }
        throw new UpstreamUnavailableError(`OpenID Connect token request to ${o.issuer} failed: ${(error as Error).message}`);
      }
      // The user an identity is linked to signs in while active and in the organizations this provider serves.
      const signInAs = (user: UserRow | null): UpstreamOutcome =>
        user?.status === 'active' && o.organizationIds.includes(user.organization_id)
          ? { kind: 'signed-in', userId: user.id }
          : { kind: 'refused', reason: 'This Intake account is disabled or does not sign in here.' };
      const linked = await signInByIdentity(o.pool, claims.iss, claims.sub);
      if (linked) return signInAs(linked);
      // The first sign-in of this identity: by its verified e-mail address, from the ID token or else the userinfo endpoint.
      let { email, email_verified: verified } = claims as { email?: unknown; email_verified?: unknown };
      if (typeof email !== 'string' || verified === undefined) {
        const info = await oidc.fetchUserInfo(config, accessToken, claims.sub).catch(() => undefined);
        email = typeof email === 'string' ? email : info?.email;
        verified = verified ?? info?.email_verified;
      }
      // Some providers (Amazon Cognito) send the flag as a string.
      if (typeof email !== 'string' || (verified !== true && verified !== 'true')) {
        return { kind: 'refused', reason: `${o.displayName} did not confirm an e-mail address for this account.` };
      }
      const users = await findActiveUsersByEmail(o.pool, email, o.organizationIds);
      if (users.length === 0) return { kind: 'refused', reason: `No Intake account uses ${email}. Ask your administrator to create one.` };
      if (users.length > 1)
        return {
          kind: 'refused',
          reason: `${email} belongs to several Intake accounts. Ask your administrator to sign you in with a password.`,
        };
      const user = users[0]!;
      // One identity per user at a provider: an address reassigned at the provider does not take over an account already linked.
      if (await hasIdentityAt(o.pool, user.id, claims.iss)) {
        return { kind: 'refused', reason: `This Intake account signs in with another ${o.displayName} identity. Ask your administrator.` };
      }
      await linkIdentity(o.pool, claims.iss, claims.sub, user.id);
      // Read back: a concurrent first sign-in of the same identity may have linked it first.
      return signInAs(await signInByIdentity(o.pool, claims.iss, claims.sub));
    },
  };
}
