import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';

/** The IdP's storage: a map, as the IdP lives for one test file. */
function memoryAdapter(): new (model: string) => Adapter {
  const store = new Map<string, AdapterPayload>();
  return class MemoryAdapter implements Adapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload) {
      store.set(this.key(id), payload);
    }
    async find(id: string) {
      return store.get(this.key(id));
    }
    async findByUid(uid: string) {
      return [...store.entries()].find(([k, v]) => k.startsWith(`${this.model}:`) && v.uid === uid)?.[1];
    }
    async findByUserCode() {
      return undefined;
    }
    async consume(id: string) {
      const v = store.get(this.key(id));
      if (v) v.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [k, v] of store) if (v.grantId === grantId) store.delete(k);
    }
  };
}

export interface IdpAccount {
  email?: string;
  email_verified?: boolean | string;
}

/** A company's OpenID Connect provider, on this machine: oidc-provider playing the IdP. */
export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The accounts it knows, by subject. */
  accounts: Map<string, IdpAccount>;
  /** Who the next person to sign in at it is (its login page signs them in at once); undefined: they cancel. */
  signInAs: string | undefined;
  /** Registers Intake as its client, with the redirect URI the API under test announces. */
  register(redirectUri: string): void;
  close(): Promise<void>;
}

/**
 * Starts the IdP; `register` gives it its one confidential client (Intake). Its sign-in
 * page signs in `signInAs` straight away (or denies, when unset) and consent is implied, so a
 * browser passes through it as through a company's single sign-on with a session already open.
 * Its cookies have names of their own: it shares the host name 127.0.0.1 with the API under test.
 */
export async function startTestIdp(): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const clientId = 'intake';
  const clientSecret = 'test-idp-client-secret-of-some-length';
  const accounts = new Map<string, IdpAccount>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-idp' };
  let callback: ReturnType<Provider['callback']> | undefined;
  let provider: Provider | undefined;
  const idp: TestIdp = { issuer, clientId, clientSecret, accounts, signInAs: undefined, register, close: async () => undefined };
  function register(redirectUri: string) {
    provider = configured(redirectUri);
    callback = provider.callback();
  }
  const configured = (redirectUri: string) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
          response_types: ['code'],
          grant_types: ['authorization_code'],
        },
      ],
      adapter: memoryAdapter(),
      jwks: { keys: [jwk] },
      ttl: { Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...accounts.get(sub) }) }),
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      cookies: { keys: ['test-idp-cookie-key'], names: { session: 'idp_session', interaction: 'idp_interaction', resume: 'idp_resume' } },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      // Consent implied: the company's own application.
      loadExistingGrant: async (ctx) => {
        const accountId = ctx.oidc.session?.accountId;
        if (!accountId || !ctx.oidc.client) return undefined;
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId });
        grant.addOIDCScope('openid email');
        await grant.save();
        return grant;
      },
    });
  server.on('request', (req, res) => {
    if (!provider || !callback) {
      res.statusCode = 503;
      res.end('not registered yet');
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      const result = idp.signInAs
        ? { login: { accountId: idp.signInAs } }
        : { error: 'access_denied', error_description: 'The user cancelled.' };
      provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false }).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    void callback(req, res);
  });
  idp.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return idp;
}
