import { decideApprovalUpdate, stateQuery, type PendingApproval } from '../contracts/api';
import { ConfigError } from '../config/config-error';
import type { SessionHandle } from './sessions';

export interface ApprovalResult {
  callId: string;
  approved: boolean;
  /**
   * False when the call had already been decided (by an earlier approve or deny, or by
   * its approval timing out): nothing changed, and the call runs at most once.
   */
  applied: boolean;
}

/**
 * Approves or denies a tool call that waits for a human. An approved call runs; a denied
 * one gets an error result the model reads ("a human denied it: REASON") and the turn goes on.
 * A call id the session never asked about is refused by the session's validator.
 */
export async function decideApproval(handle: SessionHandle, decision: { callId: string; approved: boolean; reason?: string }): Promise<ApprovalResult> {
  if (decision.callId.trim() === '') throw new ConfigError('a call id must not be empty');
  if (decision.reason !== undefined && decision.reason.length > 2_000) throw new ConfigError('--reason must be at most 2000 characters');
  const { applied } = await handle.executeUpdate(decideApprovalUpdate, {
    args: [{ callId: decision.callId, approved: decision.approved, ...(decision.reason === undefined ? {} : { reason: decision.reason }) }],
  });
  return { callId: decision.callId, approved: decision.approved, applied };
}

/** The calls waiting for a decision now, oldest first. */
export async function pendingApprovals(handle: SessionHandle): Promise<PendingApproval[]> {
  return (await handle.query(stateQuery)).pendingApprovals;
}
