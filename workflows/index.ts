export { agentSession } from './session';
// A workflow of one's own asks an agent by starting a session as its child (docs/plugin.md).
export { runAgentTurn, startChildSession, type ChildSession, type ChildSessionOptions, type SessionAnswer } from './child-session';
export { agentCatalogue } from './agent-catalogue';
