// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Layer rules (README, "Layer rules"). no-restricted-imports sees an import as it is written, so
// each rule is a regex over the relative specifier: `(../)+api/` from anywhere in src/ can only
// reach the top-level api/ (no folder of src/ has these names). Flat config replaces a rule's
// options instead of merging them, so each folder below lists every rule that applies to it.
const UP = String.raw`^(\.\./)+`;
const COMPOSITION_ROOTS = 'Only the composition roots (src/main, src/cli, src/dev), tests, bench/ and harness/ import';
const rule = {
  test: { regex: `${UP}test/`, message: 'Only tests import test/; what bench/ shares with the tests lives in harness/.' },
  api: { regex: `${UP}api/`, message: `${COMPOSITION_ROOTS} api/.` },
  activities: { regex: `${UP}activities/`, message: `${COMPOSITION_ROOTS} activities/.` },
  workflowCode: {
    regex: String.raw`^(\.\./)+workflows/(?!([\w-]+/contract|search-attributes)\.js$)`,
    message: 'Outside workflows/, import only workflow contracts (workflows/<name>/contract.ts, workflows/search-attributes.ts).',
  },
  // From src/db/repositories/<file>.ts: a folder of src/ other than domain/, or anything above src/.
  repositoryScope: {
    regex: String.raw`^\.\./\.\./(?!domain/)(\.\./)*[^./][^/]*/`,
    message: 'Repositories import only src/domain, the base modules (src/*.ts, src/db/*.ts), each other and libraries.',
  },
  // From src/config.ts: a folder of src/ other than domain/, or anything above src/.
  configScope: {
    regex: String.raw`^(\.\./|\./(?!domain/)[^/]+/)`,
    message: 'src/config.ts imports no feature folder: the features import their settings types from it.',
  },
  temporalSdk: {
    group: ['@temporalio/*'],
    message: 'api/ never talks to Temporal: it calls src/ services (their gateways start and signal workflows).',
  },
  srcOutsideDomain: { regex: `${UP}src/(?!domain/)`, message: 'Workflows import from src/ only the pure rules of src/domain.' },
  activityTypes: { regex: `${UP}activities/`, allowTypeImports: true, message: 'Workflows import only the types of activities.' },
  serverLibraries: { group: ['pg', 'slonik', 'koa', '@koa/*'], message: 'No I/O in workflow code (Temporal sandbox).' },
};
/**
 * From a file `depth` folders below src/domain: a folder outside src/domain, except src/contracts
 * (request schemas) and the workflow contracts (src/*.ts base modules stay allowed).
 */
const outsideDomain = (depth) => ({
  regex: String.raw`^(\.\./){${depth + 1}}(?!contracts/)(\.\./)*(?!workflows/[\w-]+/contract\.js$|workflows/search-attributes\.js$)[^./][^/]*/`,
  message:
    'src/domain holds pure rules: it imports only src/domain, src/contracts, workflow contracts, the base modules (src/*.ts) and libraries.',
});
// SQL is written only in src/db (the repositories, the pool and the migrator).
const noSql = [{ name: 'slonik', importNames: ['sql'], message: 'SQL lives in src/db/repositories: call a repository function.' }];
const restrict = (files, patterns, paths = noSql) => ({ files, rules: { 'no-restricted-imports': ['error', { paths, patterns }] } });
const layerRules = [
  restrict(['src/**/*.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode]),
  restrict(['src/main/**/*.ts', 'src/cli/**/*.ts', 'src/dev/**/*.ts'], [rule.test, rule.workflowCode]),
  restrict(['src/db/*.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode], []),
  restrict(['src/db/repositories/*.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode, rule.repositoryScope], []),
  restrict(['src/config.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode, rule.configScope]),
  restrict(['src/domain/*.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode, outsideDomain(0)]),
  restrict(['src/domain/*/*.ts'], [rule.test, rule.api, rule.activities, rule.workflowCode, outsideDomain(1)]),
  restrict(['api/**/*.ts'], [rule.test, rule.activities, rule.workflowCode, rule.temporalSdk]),
  restrict(['activities/**/*.ts'], [rule.test, rule.api, rule.workflowCode]),
  // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O.
  restrict(
    ['workflows/**/*.ts'],
    [rule.test, rule.api, rule.srcOutsideDomain, rule.activityTypes, rule.serverLibraries],
    nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not allowed in workflow code (Temporal sandbox).' })),
  ),
  restrict(['harness/**/*.ts', 'bench/**/*.ts', 'bin/**/*.js'], [rule.test], []),
  // The console (a browser application) reaches Intake through the public REST API alone: its typed client.
  restrict(
    ['console/src/**/*.ts', 'console/src/**/*.tsx'],
    [
      {
        regex: String.raw`^(\.\./)+(src|api|activities|workflows|harness|test|bench)/`,
        message: 'The console uses the public REST API through the typed client (clients/typescript) and nothing else.',
      },
    ],
    [],
  ),
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.data/**',
      '.tools/**',
      'bench/results/**',
      'clients/*/dist/**',
      'src/otel/otlp-descriptor.generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // Uploaded text meets these regexes on the event loop: one whose time grows super-linearly with
    // its input is a denial of service (issue 29, point 7). They see only a repeated character as an
    // attack: `/<tag>[\s\S]*?<\/tag>/g` (a repeated multi-character opening) passes them, so text
    // from uploads is scanned with indexOf, not regexes. Only these two rules: the plugin's
    // recommended set found 62 things here, nearly all style (\w for [A-Za-z0-9_], the i flag,
    // unused groups), none a hazard.
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...layerRules,
  {
    // Tests (and the harness they share with bench/) read untyped JSON responses on purpose.
    files: ['test/**/*.ts', 'harness/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Scripts the image build runs with Node alone (no TypeScript in that stage).
    files: ['deploy/image/*.mjs'],
    languageOptions: { globals: { console: 'readonly' } },
  },
);
