import { spawn } from 'node:child_process';
import { loadConfig } from '../config.js';
import { readStackInfo } from '../dev/stack-file.js';
import { findTemporalCli } from '../dev/temporal-cli.js';

/**
 * `npm run -s temporal -- <args>`: the Temporal CLI aimed at this deployment (TEMPORAL_ADDRESS and
 * TEMPORAL_NAMESPACE, or the dev stack running here), whichever Temporal CLI the stack itself uses
 * (TEMPORAL_CLI_PATH, PATH, .tools/), so that a guide's `workflow list` never reaches some other
 * server that happens to listen on 7233. The CLI reads the address and namespace from these
 * environment variables; flags given on the command line still win.
 */
const config = loadConfig();
const stack = config.temporal.address ? null : await readStackInfo(config.dataDir);
const address = config.temporal.address ?? stack?.temporalAddress;
if (!address) {
  process.stderr.write('TEMPORAL_ADDRESS is not set and no dev stack is running here (start one with `npm start`).\n');
  process.exit(1);
}
const cli = await findTemporalCli(config.temporal.cliPath, (m) => process.stderr.write(`${m}\n`), config.toolsDir);
const child = spawn(cli, process.argv.slice(2), {
  stdio: 'inherit',
  env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: config.temporal.namespace },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
