#!/usr/bin/env node
// `agent <command>` (npx agent send …): the session CLI, compiled when `npm run build` made it.
import { launch } from './launch.js';

await launch('client/main');
