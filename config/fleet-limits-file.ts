import { FleetLimitsFileSchema, type FleetLimit } from '../contracts/fleet-limits';
import { ConfigError } from './config-error';
import { readJsonFile } from './json-file';

/**
 * AGENT_LIMITS_FILE (docs/fleet-limits.md): the limits every LLM call of the worker's task
 * queue is held to, together with every other worker of it. Unset: no limits, and the LLM
 * activity asks no limiter. A mistake is one ConfigError naming the entry and the field.
 */
export function loadFleetLimits(path?: string): FleetLimit[] {
  if (path === undefined) return [];
  const parsed = FleetLimitsFileSchema.safeParse(readJsonFile('AGENT_LIMITS_FILE', path));
  if (parsed.success) return parsed.data.limits;
  const issue = parsed.error.issues[0];
  const keys = issue?.code === 'unrecognized_keys' ? `: ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : '';
  throw new ConfigError(
    `AGENT_LIMITS_FILE: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}${keys} (expected {"limits": [{"provider": "anthropic", "model"?: "…", "inputTokensPerMinute"?: N, "outputTokensPerMinute"?: N, "requestsPerMinute"?: N, "concurrentCalls"?: N}]})`,
  );
}
