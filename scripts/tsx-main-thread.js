// @ts-check
/**
 * `node scripts/tsx-main-thread.js ENTRY.ts [ARG…]`: runs a TypeScript entry point with tsx
 * registered in this thread only, as `npm run worker` (bin/launch.js) runs a worker from
 * source. Started with `--import tsx` instead, every thread would load tsx, the SDK's
 * workflow threads too, and tsx turns on source maps in each: Node then scans every
 * function the sandbox compiles for a source-map comment, and the SDK compiles two for
 * every promise a workflow makes. A production worker's workflow threads run without
 * that, so the benchmark's and the tests' worker processes do too. The entry sees the
 * arguments it would see if started directly (its own path as `process.argv[1]`).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const [, , entry] = process.argv;
if (entry === undefined) throw new Error('usage: node scripts/tsx-main-thread.js ENTRY.ts [ARG…]');
process.argv.splice(1, 1);
register();
await import(pathToFileURL(path.resolve(entry)).href);
