// @ts-check
/**
 * Starts bench/worker-child.ts the way `npm run worker` (bin/launch.js) starts a worker from
 * source: tsx registered in this thread only. Started with `--import tsx` instead, every
 * thread would load tsx, the SDK's workflow threads too, and tsx turns on source maps in
 * each: Node then scans every function the sandbox compiles for a source map comment, and
 * the SDK compiles two per promise a workflow makes. A production worker's workflow
 * threads run without that, so the benchmark's must too.
 */
import { register } from 'tsx/esm/api';

register();
await import('./worker-child.ts');
