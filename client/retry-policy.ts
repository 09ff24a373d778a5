import { setRetryPolicyUpdate, describeIssues, type RetryPolicyUpdate } from '../contracts/api';
import { DEFAULT_RETRY_POLICY, RetryPolicySchema, type SessionRetryPolicy } from '../contracts/retry-policy';
import { ConfigError } from '../config/config-error';
import type { SessionHandle } from './sessions';

/**
 * The `retry-policy` argument: `off` (one attempt per LLM call), `default` (the product
 * ladder), or a JSON object. The object may name only the fields to change; the others
 * come from the default ladder, so `{"maxRetries":3}` is a complete policy. It is checked
 * here against the same bounds the session enforces, so a typo never reaches the session.
 */
export function parseRetryPolicyArg(text: string): RetryPolicyUpdate {
  const trimmed = text.trim();
  if (trimmed === 'off') return null;
  if (trimmed === 'default') return 'default';
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw new ConfigError(`retry policy must be off, default or a JSON object, got ${JSON.stringify(text)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError('retry policy JSON must be an object such as {"maxRetries":3}');
  }
  const parsed = RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, ...value });
  if (!parsed.success) throw new ConfigError(`invalid retry policy: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** Sets the session's live policy; it applies from the next failure on, also to a call already retrying. Returns the policy now in force. */
export async function setRetryPolicy(handle: SessionHandle, policy: RetryPolicyUpdate): Promise<SessionRetryPolicy> {
  return handle.executeUpdate(setRetryPolicyUpdate, { args: [policy] });
}

/** One line for people: `off (one attempt per LLM call)` or the ladder's numbers. */
export function describeRetryPolicy(policy: SessionRetryPolicy): string {
  if (policy === null) return 'off (one attempt per LLM call)';
  const s = (ms: number) => `${ms / 1000} s`;
  return (
    `${policy.maxRetries} retries, ${s(policy.baseDelayMs)} doubling to ${s(policy.maxDelayMs)}, ` +
    `${s(policy.budgetMs)} budget, server waits up to ${s(policy.maxServerWaitMs)}`
  );
}
