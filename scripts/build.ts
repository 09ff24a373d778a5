/**
 * `npm run build`: compiles the client, the worker and what they import to `dist/` with
 * tsc (the TypeScript compiler API, reading tsconfig.build.json), so `agent`, `npm run
 * client` and `npm run worker` start without compiling TypeScript on every run.
 *
 * The sources import each other without extensions (`./config`), which a bundler
 * resolves but Node's ESM loader does not; the emit adds them (`./config.js`,
 * `./tools/index.js`, `@temporalio/common/lib/time.js`). The build goes to a folder of its
 * own and replaces `dist/` only when complete, with `dist/.build-stamp` in it: the
 * launchers (bin/) run the compiled code only when that stamp is newer than every source.
 */
import { existsSync, statSync } from 'node:fs';
import { cp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { PROJECT_ROOT } from '../harness/temporal-binaries';

export const DIST_DIR = path.join(PROJECT_ROOT, 'dist');
const CONFIG = path.join(PROJECT_ROOT, 'tsconfig.build.json');
/** Files the compiled code reads beside itself, copied as they are: the chat page's (gateway/page/routes.ts). */
const ASSET_DIRS = ['gateway/page/assets'];

/**
 * The launcher's stamp and freshness check, loaded when first needed: `npm run build` runs
 * this file through bin/launch.js, and a static import of the launcher would wait for the
 * launcher's own top-level await, which waits for this file (Node exits 13, nothing built).
 */
const launcher = () => import('../bin/launch.js');

/** Builds unless `dist/` is already up to date with the sources. */
export async function ensureBuilt(): Promise<void> {
  const { isFresh } = await launcher();
  if (!isFresh()) await build();
}

export async function build(): Promise<void> {
  const { STAMP } = await launcher();
  const outDir = `${DIST_DIR}.tmp-${process.pid}-${Date.now()}`;
  try {
    const program = createProgram(outDir);
    const emitted = program.emit(undefined, undefined, undefined, false, { after: [addJsExtensions], afterDeclarations: [inDeclarations(addJsExtensions)] });
    const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
    if (diagnostics.length > 0) {
      const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => PROJECT_ROOT, getNewLine: () => '\n' };
      throw new Error(ts.formatDiagnostics(diagnostics, host));
    }
    await writeCommandManifest(outDir);
    for (const dir of ASSET_DIRS) await cp(path.join(PROJECT_ROOT, dir), path.join(outDir, dir), { recursive: true });
    await writeFile(path.join(outDir, path.basename(STAMP)), `${new Date().toISOString()}\n`);
    const old = `${DIST_DIR}.old-${process.pid}-${Date.now()}`;
    if (existsSync(DIST_DIR)) await rename(DIST_DIR, old);
    await rename(outDir, DIST_DIR);
    await rm(old, { recursive: true, force: true });
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

function createProgram(outDir: string): ts.Program {
  const read = ts.readConfigFile(CONFIG, (file) => ts.sys.readFile(file));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, PROJECT_ROOT, { outDir }, CONFIG);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

/** Every command's help, from the compiled commands themselves (client/command-manifest.ts says why). */
async function writeCommandManifest(outDir: string): Promise<void> {
  const compiled = (file: string) => pathToFileURL(path.join(outDir, 'client', file)).href;
  const [{ COMMANDS }, { COMMAND_MANIFEST, commandSummaries }] = await Promise.all([
    import(compiled('commands/index.js')) as Promise<typeof import('../client/commands/index')>,
    import(compiled('command-manifest.js')) as Promise<typeof import('../client/command-manifest')>,
  ]);
  await writeFile(COMMAND_MANIFEST, `${JSON.stringify(commandSummaries(COMMANDS), null, 2)}\n`);
}

/**
 * `./config` → `./config.js`, `./tools` → `./tools/index.js`, and a deep import into a
 * package without an exports map (`@temporalio/common/lib/proto-utils`) → its `.js` file,
 * in imports, re-exports, `import()` and the declarations' `import("…")` types.
 */
const addJsExtensions: ts.TransformerFactory<ts.SourceFile> = (context) => (sourceFile) => {
  const dir = path.dirname(sourceFile.fileName);
  const rewrite = (specifier: ts.Expression | undefined): ts.StringLiteral | undefined => {
    if (!specifier || !ts.isStringLiteral(specifier)) return undefined;
    const resolved = specifier.text.startsWith('.') ? withExtension(dir, specifier.text) : deepImportWithExtension(sourceFile.fileName, specifier.text);
    return resolved === specifier.text ? undefined : context.factory.createStringLiteral(resolved);
  };
  const visit = (node: ts.Node): ts.Node => {
    if (ts.isImportDeclaration(node)) {
      const specifier = rewrite(node.moduleSpecifier);
      if (specifier) return context.factory.updateImportDeclaration(node, node.modifiers, node.importClause, specifier, node.attributes);
    }
    if (ts.isExportDeclaration(node)) {
      const specifier = rewrite(node.moduleSpecifier);
      if (specifier) return context.factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, specifier, node.attributes);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = rewrite(node.argument.literal);
      if (specifier) return context.factory.updateImportTypeNode(node, context.factory.createLiteralTypeNode(specifier), node.attributes, node.qualifier, node.typeArguments, node.isTypeOf);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const specifier = rewrite(node.arguments[0]);
      if (specifier) return context.factory.updateCallExpression(node, node.expression, node.typeArguments, [specifier]);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return ts.visitNode(sourceFile, visit) as ts.SourceFile;
};

/**
 * The same rewrite for the `.d.ts` files: a package's types are read with Node's rules too
 * (moduleResolution node16 or bundler), and under node16 `./config` resolves to nothing.
 */
function inDeclarations(transformer: ts.TransformerFactory<ts.SourceFile>): ts.TransformerFactory<ts.SourceFile | ts.Bundle> {
  return (context) => {
    const transform = transformer(context);
    return (node) => (ts.isSourceFile(node) ? transform(node) : node);
  };
}

function withExtension(dir: string, specifier: string): string {
  const target = path.resolve(dir, specifier);
  if (existsSync(`${target}.ts`)) return `${specifier}.js`;
  if (existsSync(target) && statSync(target).isDirectory() && existsSync(path.join(target, 'index.ts'))) return `${specifier}/index.js`;
  return specifier;
}

/** A bare specifier with a subpath, resolved as CommonJS would: its file, if that adds only `.js` or `/index.js`. */
function deepImportWithExtension(fromFile: string, specifier: string): string {
  const parts = specifier.split('/');
  const subpathStart = specifier.startsWith('@') ? 2 : 1;
  if (parts.length <= subpathStart || specifier.startsWith('node:')) return specifier;
  let resolved: string;
  try {
    resolved = createRequire(fromFile).resolve(specifier);
  } catch {
    return specifier;
  }
  const normalized = resolved.split(path.sep).join('/');
  for (const suffix of ['.js', '/index.js']) if (normalized.endsWith(`/${specifier}${suffix}`)) return `${specifier}${suffix}`;
  return specifier;
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(PROJECT_ROOT, 'scripts', 'build.ts');
if (invokedDirectly) {
  const started = Date.now();
  build().then(
    () => console.log(`build: dist/ ready in ${((Date.now() - started) / 1000).toFixed(1)} s`),
    (error: unknown) => {
      console.error(`build: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
