import { patched } from '@temporalio/workflow';

/**
 * Sessions recorded before this keyed a call's approval and its Idempotency-Key by the
 * provider's call id alone, which is unique only within one assistant message: a later
 * turn's call reusing an id rode on the earlier call's decision and sent its key. From this
 * patch on both are keyed by the call's position (turn, step, call id).
 */
export const CALL_POSITION_PATCH = 'call-position-keys';

/**
 * Whether the call being approved or dispatched now is keyed by its position. Asked where
 * a key is needed (a wait begins, a side-effecting call is scheduled), so a session
 * replaying calls recorded before the patch keys them as it did then; a wait keeps the
 * key it began with.
 */
export function keyedByPosition(): boolean {
  return patched(CALL_POSITION_PATCH);
}
