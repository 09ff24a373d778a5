/**
 * The Idempotency-Key for a side-effecting call. It must be the same on every attempt
 * and every replay of the same call, and different for every other call, so it is a
 * pure function of the workflow id and the call's position in the session: its turn, its
 * step and the provider's call id. The call id alone is not enough: a provider makes ids
 * unique within one assistant message only, and a later turn's call may reuse an earlier
 * one's, which a server honouring the key would then drop as a repeat.
 *
 * Why a hash instead of `${workflowId}/${callId}`: a workflow id may be up to 1000
 * characters of any Unicode, which is neither bounded nor header-safe. FNV-1a 128 is a
 * few lines of BigInt arithmetic (no crypto module, which the workflow sandbox lacks),
 * and 128 bits keeps accidental collisions out of reach for any realistic number of
 * calls. It is not a secret and need not resist an adversary: the target server scopes
 * keys to its own client anyway.
 *
 * The result is `agent-` plus 32 lowercase hex digits: 38 characters, a valid HTTP token.
 */
export function positionIdempotencyKey(workflowId: string, { turn, step, callId }: CallPosition): string {
  // The length prefix ends the workflow id and the integers end at their colons, so the
  // encoding is unambiguous; the leading `position:` keeps it apart from every legacy
  // encoding, which starts with a digit.
  const bytes = new TextEncoder().encode(`position:${workflowId.length}:${workflowId}${turn}:${step}:${callId}`);
  return `agent-${fnv1a128Hex(bytes)}`;
}

/** Where a call was asked for: the provider's id is unique only within its assistant message. */
export interface CallPosition {
  turn: number;
  step: number;
  callId: string;
}

/**
 * The key of sessions whose calls were keyed before the position was (no `call-position-keys`
 * patch marker): the workflow id and the call id only. Kept verbatim so those sessions
 * send the keys they always did.
 */
export function idempotencyKey(workflowId: string, callId: string): string {
  // The length prefix makes the pair encoding unambiguous: ("a/b", "c") ≠ ("a", "b/c").
  const bytes = new TextEncoder().encode(`${workflowId.length}:${workflowId}${callId}`);
  return `agent-${fnv1a128Hex(bytes)}`;
}

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x0000000001000000000000000000013bn;
const MASK_128 = (1n << 128n) - 1n;

/** FNV-1a, 128-bit variant, as 32 hex digits. Exported for its test vectors. */
export function fnv1a128Hex(bytes: Uint8Array): string {
  let hash = FNV128_OFFSET;
  for (const byte of bytes) {
    hash ^= BigInt(byte);
    hash = (hash * FNV128_PRIME) & MASK_128;
  }
  return hash.toString(16).padStart(32, '0');
}
