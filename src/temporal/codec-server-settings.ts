import { ConfigError, signingSecretPayloadKeys, type Config } from '../config.js';
import { readStackInfo } from '../dev/stack-file.js';
import type { PayloadKey } from './codec.js';
import { codecServerHosts, codecServerToken } from './codec-server.js';

export interface CodecServerSettings {
  keys: PayloadKey[];
  token: string;
  /** Whether the token was made here (derived), so that printing it tells the operator something new. */
  tokenDerived: boolean;
  allowedOrigins: string[];
  allowedHosts: string[];
  url: string;
  /** Where the keys came from, for the banner. */
  keysFrom: 'configuration' | 'the running dev stack';
  temporalUiUrl: string | null;
}

/**
 * What `npm run codec-server` serves with: the configured keys and token, or in development those of
 * the dev stack running here (`npm start` writes its signing secret to `DATA_DIR/stack.json`), so
 * that it works with no setting at all.
 */
export async function codecServerSettings(config: Config): Promise<CodecServerSettings> {
  const stack = config.env === 'production' ? null : await readStackInfo(config.dataDir);
  const fromStack = !config.auth.signingSecret && !config.temporal.payloadKeys && stack !== null;
  const signingSecret = config.auth.signingSecret ?? (fromStack ? stack.signingSecret : undefined);
  const keys = config.temporal.payloadKeys ?? (signingSecret ? signingSecretPayloadKeys(signingSecret) : undefined);
  if (!keys) {
    throw new ConfigError(
      'the codec server needs the payload keys: set TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET, or start the dev stack here first (`npm start`)',
    );
  }
  const token = config.codecServer.token ?? (signingSecret ? codecServerToken(signingSecret) : undefined);
  if (!token)
    throw new ConfigError(
      'the codec server needs its credential: set CODEC_SERVER_TOKEN (at least 32 random characters), or SIGNING_SECRET to derive one',
    );
  const { host, port } = config.codecServer;
  // The dev stack's UI may run on another port than the default origins name.
  const uiOrigin = fromStack && stack.temporalUiUrl ? new URL(stack.temporalUiUrl).origin : null;
  const allowedOrigins = [...new Set([...config.codecServer.allowedOrigins, ...(uiOrigin ? [uiOrigin] : [])])];
  const shownHost = ['0.0.0.0', '::'].includes(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    keys,
    token,
    tokenDerived: !config.codecServer.token,
    allowedOrigins,
    allowedHosts: codecServerHosts(host, port, config.codecServer.extraHosts),
    url: `http://${shownHost}:${port}`,
    keysFrom: fromStack ? 'the running dev stack' : 'configuration',
    temporalUiUrl: fromStack ? stack.temporalUiUrl : null,
  };
}

/** How to point the Temporal UI and CLI at it (printed when it starts). */
export function codecServerInstructions(s: CodecServerSettings): string {
  const token = s.tokenDerived ? s.token : '<CODEC_SERVER_TOKEN>';
  return [
    `  Codec server  ${s.url}   (payload keys from ${s.keysFrom})`,
    `  Browser       open ${s.url}/session?token=${token} once (a cookie for this host)`,
    `  Temporal UI   ${s.temporalUiUrl ?? 'your Temporal UI'}: Codec Server settings (top bar) → endpoint ${s.url},`,
    `                "Include cross-origin credentials" on; open the UI by the same host name (${new URL(s.url).hostname})`,
    `  CLI           temporal workflow show --codec-endpoint ${s.url} --codec-auth 'Bearer ${token}' --workflow-id …`,
  ].join('\n');
}
