#!/usr/bin/env node
/* global process */
// The `intake` command (package bin): runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
