import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../src/dev/net.js';
import { ensurePipTool } from './tools.js';

/** moto's S3-compatible server (PyPI), installed into .tools/ like the Temporal CLI. */
const MOTO_VERSION = '5.2.5';

export const TEST_S3_CREDENTIALS = { accessKeyId: 'test-access-key', secretAccessKey: 'test-secret-key' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** UPLOAD_STORE=s3 settings for this server and bucket. */
  env: Record<string, string>;
  client: S3Client;
  stop(): Promise<void>;
}

/**
 * A local S3-compatible server (moto) on a free port, with one bucket: the upload store's S3
 * adapter is tested against a real HTTP S3 API (multipart uploads included), as production runs
 * it against AWS S3, SeaweedFS or R2.
 */
export async function startTestS3(bucket = 'intake-uploads'): Promise<TestS3> {
  const motoDir = await ensurePipTool('moto', MOTO_VERSION, path.join('moto', 'server.py'), `moto[server]==${MOTO_VERSION}`);
  const port = await freePort();
  const child: ChildProcess = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, PYTHONPATH: motoDir },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  let up = false;
  for (let i = 0; i < 300 && !up; i++) {
    try {
      up = (await fetch(`${endpoint}/moto-api/`)).status < 500;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (!up) {
    child.kill('SIGKILL');
    throw new Error('the S3 test server did not start');
  }
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: TEST_S3_CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    client,
    env: {
      UPLOAD_STORE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: TEST_S3_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: TEST_S3_CREDENTIALS.secretAccessKey,
      S3_PART_SIZE_BYTES: String(5 * 1024 * 1024),
    },
    async stop() {
      client.destroy();
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
