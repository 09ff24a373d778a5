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

/**
 * A border between top-level folders: an import of one of `folders` from any depth
 * (`../worker/x`, `../../client`), as the import rule's pattern and, since that rule does
 * not see `import()`, as a selector for the dynamic form. Only relative paths match: a
 * package such as `@temporalio/worker` is not the worker's folder.
 * @param {string[]} folders
 * @param {string} message
 */
function border(folders, message) {
  const regex = `^(\\.\\.?/)+(${folders.join('|')})(/|$)`;
  return {
    pattern: { regex, message },
    selector: { selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`, message },
  };
}

/**
 * The product (every folder of the build) is run, tested and measured by scripts/,
 * harness/, test/ and bench/, never the other way round: the build, the image and the
 * package leave those out, so a product module that imported one would break there.
 */
const RUNNERS = border(['scripts', 'test', 'bench', 'harness'], 'Product code does not import scripts/, test/, bench/ or harness/: they run the product, and the build, the image and the package leave them out.');

/**
 * testing/ is in the package (durable-agent-worker/testing) for the users' own tests: the
 * fake model and the helper that runs an agent against it. Product code that imported it
 * would ship a test double into every worker and client, and could answer with it.
 */
const TEST_DOUBLES = border(['testing'], "Product code does not import testing/: it is the fake model and its helpers for users' tests (durable-agent-worker/testing), which no worker or client may depend on.");

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
      group: ['**/client', '**/client/**', '**/worker', '**/worker/**', '**/connection', '**/connection/**', '**/config', '**/config/**', '**/encryption', '**/encryption/**', '**/tracing', '**/tracing/**'],
      allowTypeImports: true,
      message: `The client's, the worker's and the connection's code does not run in ${SANDBOX}; import its types only, and shared values from contracts/.`,
    },
    {
      // Values from activities/ would drag Node code into the bundle; types are erased.
      group: ['**/activities', '**/activities/**'],
      allowTypeImports: true,
      message: `Import activities as types only (\`import type\`) and call them through proxyActivities: their code does not run in ${SANDBOX}.`,
    },
    RUNNERS.pattern,
    TEST_DOUBLES.pattern,
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
const WORKFLOWS_TYPES_ONLY = {
  group: ['**/workflows', '**/workflows/**'],
  allowTypeImports: true,
  message: 'Import shared schemas and types from contracts/; workflows/ is the session workflow, bundled for the sandbox.',
};
/** The import rule does not see `import()`: a dynamic import of workflows/ is a value import too. */
const NO_DYNAMIC_WORKFLOWS = { selector: 'ImportExpression[source.value=/workflows/]', message: WORKFLOWS_TYPES_ONLY.message };

/**
 * The layers outside the sandbox, each with the folders it may not reach (types
 * included: a type names the other side's shape, which then cannot change alone). The
 * worker process puts activities and workflows together; the client talks to it through
 * Temporal only; what both load (config, connection, encryption, tracing) belongs to
 * neither.
 */
const OUTSIDE_LAYERS = [
  {
    files: ['activities/**/*.ts'],
    refuses: border(['worker', 'client', 'gateway'], "activities/ know nothing of the worker's or the client's process, nor of the gateway's: they are given what they need (createActivities), and shared schemas come from contracts/ or config/."),
  },
  {
    files: ['client/**/*.ts'],
    refuses: border(['worker', 'activities'], 'The client reaches the worker through Temporal only: what both use lives in contracts/, config/, connection/, encryption/ or tracing/.'),
  },
  {
    files: ['worker/**/*.ts'],
    refuses: border(['client', 'gateway'], 'The worker does not load the client or the gateway: what both use lives in contracts/, config/, connection/, encryption/ or tracing/.'),
  },
  {
    files: ['config/**/*.ts', 'connection/**/*.ts', 'encryption/**/*.ts', 'tracing/**/*.ts'],
    refuses: border(['worker', 'client', 'activities', 'gateway'], 'config/, connection/, encryption/ and tracing/ are loaded by the worker and the client alike: they import neither of them, nor activities/ or gateway/.'),
  },
  {
    // The gateway is a client process (client/, contracts/, config/, connection/, tracing/, streaming/); workflows/ for types only.
    files: ['gateway/**/*.ts'],
    refuses: border(['worker', 'activities'], 'The gateway reaches the worker through Temporal and the live stream only: it builds on client/, and what it shares lives in contracts/, config/ or streaming/.'),
  },
  {
    // The live stream's transports, loaded by the worker and the gateway alike (docs/live-stream.md).
    files: ['streaming/**/*.ts'],
    refuses: border(['worker', 'client', 'gateway', 'activities'], 'streaming/ is loaded by the worker and the gateway alike: it imports neither of them, nor client/ or activities/; what it shares lives in contracts/ or config/.'),
  },
];

export default defineConfig(
  {
    // examples/ are user projects of their own, built against the packed package (.ci/run checks them there).
    ignores: ['node_modules/**', '.temporal/**', '.data/**', 'test-results/**', 'bench/results/**', 'dist/**', 'examples/**'],
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
    // The chat page's module scripts (gateway/page/), which run in the browser, not in Node.
    files: ['gateway/page/assets/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'history', 'sessionStorage', 'fetch', 'AbortController', 'setTimeout', 'CSS', 'URLSearchParams', 'TextDecoderStream'].map((name) => [name, 'readonly']),
      ),
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
    // The sandbox's code has no dynamic import() of its own; one of what runs the product is refused all the same.
    files: ['workflows/**/*.ts', 'contracts/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', RUNNERS.selector, TEST_DOUBLES.selector] },
  },
  {
    // The package's main entry, compiled with the rest of the product (tsconfig.build.json).
    files: ['index.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [RUNNERS.pattern, TEST_DOUBLES.pattern] }],
      'no-restricted-syntax': ['error', RUNNERS.selector, TEST_DOUBLES.selector],
    },
  },
  {
    // The package's testing entry runs the product (a worker, a session) and ships with it: like the product, it imports none of what the package leaves out.
    files: ['testing/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [RUNNERS.pattern] }],
      'no-restricted-syntax': ['error', RUNNERS.selector],
    },
  },
  ...OUTSIDE_LAYERS.map(({ files, refuses }) => ({
    files,
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [WORKFLOWS_TYPES_ONLY, refuses.pattern, RUNNERS.pattern, TEST_DOUBLES.pattern] }],
      'no-restricted-syntax': ['error', NO_DYNAMIC_WORKFLOWS, refuses.selector, RUNNERS.selector, TEST_DOUBLES.selector],
    },
  })),
  {
    // Loaded into the sandbox by path (failureConverterPath), beside the workflows: it obeys
    // the sandbox's rules, and like contracts/ it depends on no session code.
    files: ['encryption/failure-converter.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', contractsRestrictedImports],
    },
  },
);
