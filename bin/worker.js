#!/usr/bin/env node
// `npm run worker`: the worker, compiled when `npm run build` made it.
import { launch } from './launch.js';

await launch('worker/main');
