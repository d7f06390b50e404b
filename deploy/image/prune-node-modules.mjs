// The image's production dependencies, pruned of what the runtime never loads:
// - the Temporal core bridge's prebuilt libraries for other platforms (about 110 MB) and its Rust
//   sources. The bridge picks its library with the same function (common.js), so what stays is what
//   it loads here;
// - the workflow bundler's compiler (@swc/core and its native binary, swc-loader): production workers
//   run the bundle `npm run build` made (WORKFLOW_BUNDLE_PATH, required with NODE_ENV=production);
// - files Node never reads when running JavaScript: source maps, TypeScript sources and declarations,
//   Markdown (licence files stay, whatever their extension).
import { readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve('node_modules');
const bridge = path.join(root, '@temporalio', 'core-bridge');
const { getPrebuiltTargetName } = createRequire(import.meta.url)(path.join(bridge, 'common.js'));
const target = getPrebuiltTargetName();
for (const release of readdirSync(path.join(bridge, 'releases'))) {
  if (release !== target) rmSync(path.join(bridge, 'releases', release), { recursive: true, force: true });
}
for (const source of ['sdk-core', 'src', 'bridge-macros', 'Cargo.toml', 'Cargo.lock']) {
  rmSync(path.join(bridge, source), { recursive: true, force: true });
}
for (const bundlerOnly of ['@swc', 'swc-loader']) rmSync(path.join(root, bundlerOnly), { recursive: true, force: true });

const unread = /(\.map|\.ts|\.mts|\.cts|\.md|\.markdown)$/i;
const licence = /^(licen[cs]e|notice|copying|authors)/i;
let files = 0;
let bytes = 0;
for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !unread.test(entry.name) || licence.test(entry.name)) continue;
  const file = path.join(entry.parentPath, entry.name);
  bytes += statSync(file).size;
  rmSync(file);
  files += 1;
}
console.log(
  `kept the Temporal core bridge for ${target}; removed the bundler's compiler and ${files} files never loaded (${Math.round(bytes / 1048576)} MB)`,
);
