import { ConfigError, loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { EncryptionCodec } from '../temporal/codec.js';
import { codecServerApp } from '../temporal/codec-server.js';
import { codecServerInstructions, codecServerSettings } from '../temporal/codec-server-settings.js';

/** `npm run codec-server`: the payload codec for the Temporal UI, on CODEC_SERVER_HOST:CODEC_SERVER_PORT. */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'intake-codec-server');
const settings = await codecServerSettings(config).catch((error: unknown) => {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Codec server failed to start: ${error.message}.\n`);
  process.exit(1);
});
const app = codecServerApp(new EncryptionCodec(settings.keys), settings);
const server = app.listen(config.codecServer.port, config.codecServer.host, () => {
  logger.info(
    { url: settings.url, allowedOrigins: settings.allowedOrigins, allowedHosts: settings.allowedHosts },
    'codec server listening',
  );
  process.stdout.write(`\n${codecServerInstructions(settings)}\n\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
