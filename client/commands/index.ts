import { agentsCommand } from './agents';
import { approveCommand, denyCommand } from './approval';
import { budgetCommand } from './budget';
import { cancelCommand } from './cancel';
import type { Command } from './command';
import { endCommand } from './end';
import { forkCommand } from './fork';
import { historyCommand } from './history';
import { keysCommand } from './keys';
import { listCommand } from './list';
import { logCommand } from './log';
import { refreshToolsCommand } from './refresh-tools';
import { retryPolicyCommand } from './retry-policy';
import { runCommand } from './run';
import { sendCommand } from './send';
import { serveCommand } from './serve';
import { showCommand } from './show';
import { startCommand } from './start';
import { toolsCommand } from './tools';
import { watchCommand } from './watch';

/** Every `npm run client` command, in the order the usage text lists them. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  sendCommand,
  runCommand,
  watchCommand,
  logCommand,
  historyCommand,
  forkCommand,
  cancelCommand,
  endCommand,
  toolsCommand,
  refreshToolsCommand,
  retryPolicyCommand,
  budgetCommand,
  approveCommand,
  denyCommand,
  listCommand,
  showCommand,
  agentsCommand,
  serveCommand,
  keysCommand,
];
