import { loadPriceTable, type PriceTable } from '../activities/llm/price-table';
import { loadFleetLimits } from '../config/fleet-limits-file';
import { loadMcpConfig, type McpConfig } from '../config/mcp-config';
import type { FleetLimit } from '../contracts/fleet-limits';
import type { WorkerEnv } from './config';

/** What the worker takes from the files its environment names. */
export interface WorkerFiles {
  /** The MCP servers of AGENT_MCP_CONFIG; none without it. */
  mcp: McpConfig;
  /** The built-in prices with AGENT_PRICES_FILE's entries over them. */
  prices: PriceTable;
  /** AGENT_LIMITS_FILE's fleet limits; none without it (absent: none, for options made before it). */
  limits?: readonly FleetLimit[];
}

/**
 * Reads AGENT_MCP_CONFIG, AGENT_PRICES_FILE and AGENT_LIMITS_FILE, each once, in the process's main before it
 * connects, and the worker is given what was read: a bad file stops the process in one
 * line before anything else happens, a file changed while the worker runs changes
 * nothing until it restarts, and a file that can be read only once (a pipe, as a shell's
 * `<(…)` gives) works. `variables` answers the MCP file's `${VAR}` references.
 */
export function readWorkerFiles(env: Pick<WorkerEnv, 'AGENT_MCP_CONFIG' | 'AGENT_PRICES_FILE' | 'AGENT_LIMITS_FILE'>, variables: Record<string, string | undefined>): WorkerFiles {
  return { mcp: loadMcpConfig(env.AGENT_MCP_CONFIG, variables), prices: loadPriceTable(env.AGENT_PRICES_FILE), limits: loadFleetLimits(env.AGENT_LIMITS_FILE) };
}
