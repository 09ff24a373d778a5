/**
 * The pairing check of the scripted LLM (testing/scripted-llm/pairing.ts), which refuses
 * an unpaired request itself: tests use the same check on the bodies it recorded.
 */
export { pairingFaults, unpairedToolCalls, type PairingFault } from '../../testing/scripted-llm/pairing';
