// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', '.tools/**', 'bench/results/**'] },
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
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not allowed in workflow code (Temporal sandbox).' })),
          patterns: [
            {
              // Pure domain code (src/domain) is deterministic: workflows share it with the API.
              group: ['**/src/**', '!**/src/domain', '!**/src/domain/**', '**/activities/**', 'pg', 'slonik', 'koa'],
              message: 'Workflows may import only @temporalio/workflow, their own files, pure src/domain code and activity types.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The API reaches Temporal only through the workflows' gateways (src/temporal/gateway.ts and the
    // modules over it): deadlines and the mapping of Temporal errors live there, in one place.
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@temporalio/client', message: 'api/ calls workflows through their gateways in src/, never the Temporal client.' },
          ],
        },
      ],
    },
  },
  {
    // Tests read untyped JSON responses on purpose.
    files: ['test/**/*.ts'],
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
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
