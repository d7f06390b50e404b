// The image's production dependencies, pruned of what the runtime never loads: the Temporal core
// bridge's prebuilt libraries for other platforms (about 110 MB) and its Rust sources. The bridge
// picks its library with the same function (common.js), so what stays is what it loads here.
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const bridge = path.resolve('node_modules', '@temporalio', 'core-bridge');
const { getPrebuiltTargetName } = createRequire(import.meta.url)(path.join(bridge, 'common.js'));
const target = getPrebuiltTargetName();
for (const release of readdirSync(path.join(bridge, 'releases'))) {
  if (release !== target) rmSync(path.join(bridge, 'releases', release), { recursive: true, force: true });
}
for (const source of ['sdk-core', 'src', 'bridge-macros', 'Cargo.toml', 'Cargo.lock']) {
  rmSync(path.join(bridge, source), { recursive: true, force: true });
}
console.log(`kept the Temporal core bridge for ${target}`);
