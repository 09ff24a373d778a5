import { mcpServerNames } from '../config/mcp-config';
import type { StartOptions } from './sessions';

/**
 * `--mcp`'s default: every server of the file AGENT_MCP_CONFIG names, when the client's
 * environment names one (as `npm start` and a shell shared with the worker do); none
 * otherwise. Only the servers' names are read here; their settings are the worker's.
 */
export function defaultMcpServers(env: Record<string, string | undefined>): Pick<StartOptions, 'mcp'> {
  const file = env.AGENT_MCP_CONFIG;
  if (file === undefined || file === '') return {};
  const names = mcpServerNames(file);
  return names.length > 0 ? { mcp: names } : {};
}
