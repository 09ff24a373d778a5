export { agentSession } from './session';
// A workflow of one's own asks an agent by starting a session as its child (docs/plugin.md).
export { runAgentTurn, startChildSession, type ChildSession, type ChildSessionOptions, type SessionAnswer } from './child-session';
export { agentCatalogue } from './agent-catalogue';
// The fleet limits of one provider for one task queue (docs/fleet-limits.md): asked by the LLM activity only when a limit applies.
export { agentLimiter } from './limiter/limiter-workflow';
