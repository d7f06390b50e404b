import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { PROJECT_ROOT } from '../src/paths.js';

const run = promisify(execFile);

const Project = z.object({
  services: z.record(z.string(), z.object({ environment: z.record(z.string(), z.string().nullable()).optional() })),
});

/**
 * The environment docker-compose.yml gives each of `services`, as the Compose specification's loader
 * (compose-go, through deploy/compose-check) reads it with `variables` set: what the fleet test runs
 * its API and worker processes with, so that the file and the test cannot drift apart.
 */
export async function composeEnvironments<S extends string>(
  services: readonly S[],
  variables: Record<string, string>,
): Promise<Record<S, Record<string, string>>> {
  const { stdout: built } = await run(path.join(PROJECT_ROOT, '.ci', 'compose-check'), [], { timeout: 10 * 60_000 });
  const checker = built.trim().split('\n').at(-1)!;
  const { stdout } = await run(checker, ['-json', '-f', path.join(PROJECT_ROOT, 'docker-compose.yml')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...variables },
    maxBuffer: 1 << 24,
  });
  const project = Project.parse(JSON.parse(stdout));
  const result = {} as Record<S, Record<string, string>>;
  for (const service of services) {
    const environment = project.services[service]?.environment;
    if (!environment) throw new Error(`docker-compose.yml has no environment for ${service}`);
    result[service] = Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, v ?? '']));
  }
  return result;
}

/**
 * `env` with the compose network's service addresses (`postgres:5432`, `http://seaweedfs:8333`, …)
 * replaced by where those services run here. An address left unmapped is an error: a new service
 * in the file needs its place in the test.
 */
export function onThisMachine(env: Record<string, string>, addresses: Record<string, string>): Record<string, string> {
  const mapped = Object.fromEntries(
    Object.entries(env).map(([key, value]) => {
      let v = value;
      for (const [from, to] of Object.entries(addresses)) v = v.split(from).join(to);
      return [key, v];
    }),
  );
  for (const [key, value] of Object.entries(mapped)) {
    const host = /^[a-z]+:\/\/(?:[^@/]*@)?([^:/]+)/.exec(value)?.[1] ?? /^([a-z][a-z0-9-]*):\d+$/.exec(value)?.[1];
    if (host && host !== '127.0.0.1' && host !== 'localhost')
      throw new Error(`${key}=${value}: ${host} is a compose service the fleet test does not map`);
  }
  return mapped;
}
