// @ts-check
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * Workflow code runs in Temporal's deterministic sandbox: it is bundled with webpack,
 * replayed from history, and must not touch I/O, clocks or randomness of its own. An
 * import of any of these either fails the bundle at worker start or, worse, works in
 * one run and breaks a replay. Catch it at lint time, with the reason in the message.
 */
const SANDBOX = 'the workflow sandbox (deterministic, replayed from history)';

const nodeBuiltins = builtinModules.filter((name) => !name.startsWith('_'));

const workflowRestrictedImports = {
  paths: [
    ...nodeBuiltins.map((name) => ({
      name,
      message: `Node builtins are not available in ${SANDBOX}; do I/O in an activity.`,
    })),
    { name: 'undici', message: `No HTTP in ${SANDBOX}; call an activity that does it.` },
    ...['activity', 'client', 'worker', 'testing'].map((pkg) => ({
      name: `@temporalio/${pkg}`,
      message: `@temporalio/${pkg} does not run in ${SANDBOX}; use @temporalio/workflow and @temporalio/common.`,
    })),
  ],
  patterns: [
    {
      group: ['node:*'],
      message: `Node builtins are not available in ${SANDBOX}; do I/O in an activity.`,
    },
    {
      group: ['undici/*', '@temporalio/activity/*', '@temporalio/client/*', '@temporalio/worker/*', '@temporalio/testing/*'],
      message: `Does not run in ${SANDBOX}.`,
    },
    {
      // The processes' own code reads the environment, files and sockets; types are erased.
      group: ['**/client', '**/client/**', '**/worker', '**/worker/**', '**/connection', '**/connection/**', '**/config', '**/config/**', '**/encryption', '**/encryption/**'],
      allowTypeImports: true,
      message: `The client's, the worker's and the connection's code does not run in ${SANDBOX}; import its types only, and shared values from contracts/.`,
    },
    {
      // Values from activities/ would drag Node code into the bundle; types are erased.
      group: ['**/activities', '**/activities/**'],
      allowTypeImports: true,
      message: `Import activities as types only (\`import type\`) and call them through proxyActivities: their code does not run in ${SANDBOX}.`,
    },
  ],
};

/**
 * contracts/ is what every part shares: schemas, the failure catalogue, the log format, the
 * retry policy's shape, tool definitions. Workflows import it, so it obeys the sandbox's
 * rules too; and it depends on nothing of the session's own code, or the client would
 * pull workflow code in through it.
 */
const contractsRestrictedImports = {
  paths: workflowRestrictedImports.paths,
  patterns: [
    ...workflowRestrictedImports.patterns,
    {
      group: ['**/workflows', '**/workflows/**'],
      message: 'contracts/ is shared by the client, the worker and the activities: it must not depend on the session workflow.',
    },
  ],
};

/**
 * Outside the sandbox, workflows/ is the session's code and nothing else: the client, the
 * worker and the activities reach what they share through contracts/. Types are erased, so
 * they stay allowed (the worker names `agentSession`'s type, say).
 */
const outsideRestrictedImports = {
  patterns: [
    {
      group: ['**/workflows', '**/workflows/**'],
      allowTypeImports: true,
      message: 'Import shared schemas and types from contracts/; workflows/ is the session workflow, bundled for the sandbox.',
    },
  ],
};

export default defineConfig(
  {
    ignores: ['node_modules/**', '.temporal/**', '.data/**', 'test-results/**', 'bench/results/**', 'dist/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A forgotten `await` on an activity or a client call is a silent bug; make it loud.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      // The typescript-eslint version understands `allowTypeImports`; the core rule does not.
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', workflowRestrictedImports],
    },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', contractsRestrictedImports],
    },
  },
  {
    files: ['activities/**/*.ts', 'client/**/*.ts', 'worker/**/*.ts', 'connection/**/*.ts', 'config/**/*.ts', 'encryption/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', outsideRestrictedImports],
      // The import rule does not see `import()`: a dynamic import of workflows/ is a value import too.
      'no-restricted-syntax': ['error', { selector: 'ImportExpression[source.value=/workflows/]', message: outsideRestrictedImports.patterns[0].message }],
    },
  },
  {
    // Loaded into the sandbox by path (failureConverterPath), beside the workflows: it obeys
    // the sandbox's rules, and like contracts/ it depends on no session code.
    files: ['encryption/failure-converter.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', contractsRestrictedImports],
    },
  },
);
