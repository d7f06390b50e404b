import { loadConfig, required } from '../config.js';
import { createLogger } from '../logger.js';
import { EncryptionCodec } from '../temporal/codec.js';
import { codecServerApp } from '../temporal/codec-server.js';

/** `npm run codec-server`: the payload codec for the Temporal UI, on CODEC_SERVER_HOST:CODEC_SERVER_PORT. */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'intake-codec-server');
const codec = new EncryptionCodec(required(config.temporal.payloadKeys, 'TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET'));
const server = codecServerApp(codec, { allowedOrigins: config.codecServer.allowedOrigins })
  .listen(config.codecServer.port, config.codecServer.host, () => {
    logger.info({ url: `http://${config.codecServer.host}:${config.codecServer.port}`, allowedOrigins: config.codecServer.allowedOrigins }, 'codec server listening');
  });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
