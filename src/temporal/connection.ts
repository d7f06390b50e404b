import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { required, type Config } from '../config.js';
import { temporalDataConverter } from './codec.js';
import { tracingClientInterceptors } from './tracing.js';

function options(config: Pick<Config, 'temporal'>) {
  const t = config.temporal;
  return {
    address: required(t.address, 'TEMPORAL_ADDRESS'),
    ...(t.tls || t.apiKey ? { tls: true } : {}),
    ...(t.apiKey ? { apiKey: t.apiKey } : {}),
  };
}

export interface TemporalClient {
  connection: Connection;
  client: Client;
}

/** Client side (API, CLI): gRPC reconnects by itself when the server comes back. */
export async function connectTemporalClient(config: Pick<Config, 'temporal'>): Promise<TemporalClient> {
  const connection = await Connection.connect({ ...options(config), connectTimeout: '5s' });
  return {
    connection,
    client: new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: temporalDataConverter(config.temporal.payloadKeys),
      interceptors: { workflow: tracingClientInterceptors() },
    }),
  };
}

/** Worker side: the Rust core's connection. */
export async function connectTemporalWorker(config: Pick<Config, 'temporal'>): Promise<NativeConnection> {
  return NativeConnection.connect(options(config));
}
