import type { SessionState } from '../../contracts/api';

/**
 * A running session's `state` as every worker version answers it: without the fields newer
 * workers added (settings, spend, budget), which a test adds when it needs them.
 */
export function runningState(fields: Pick<SessionState, 'turn' | 'step' | 'stepsTaken' | 'phase'>): SessionState {
  return {
    status: 'running',
    model: 'anthropic:claude-sonnet-4-5',
    queued: 0,
    retryPolicy: 'default',
    pendingApprovals: [],
    events: 40,
    runs: 1,
    ...fields,
  } as unknown as SessionState;
}
