import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { mayUseAgent } from './auth';
import type { GatewayKey } from './context';
import { GatewayError } from './errors';

/** Sessions whose agent this gateway remembers; past it the oldest is forgotten (and read again if asked). */
const REMEMBERED_SESSIONS = 10_000;

export interface SessionAccess {
  /** May this key use this session? 404 for a session that does not exist, 403 for one of an agent the key may not start. */
  authorize(key: GatewayKey, sessionId: string): Promise<void>;
  /** A session this gateway just started: its agent is known without asking. */
  remember(sessionId: string, agent: string | undefined): void;
  /** The session's agent, null for one started from settings. */
  agentOf(sessionId: string): Promise<string | null>;
}

/**
 * A key may use a session whose agent it may start. The agent is read once per session
 * per gateway (the session's `state` Query, which also proves it exists), then kept: an
 * agent never changes in a session's life, so the answer cannot go stale, and requests
 * cost no extra Temporal call.
 */
export function createSessionAccess(client: Client): SessionAccess {
  // The agent's name, or null for a session started from settings; insertion-ordered for forgetting.
  const agents = new Map<string, string | null>();
  const reading = new Map<string, Promise<string | null>>();
  const remember = (sessionId: string, agent: string | null) => {
    agents.delete(sessionId);
    agents.set(sessionId, agent);
    if (agents.size > REMEMBERED_SESSIONS) agents.delete(agents.keys().next().value as string);
  };
  const agentOf = async (sessionId: string): Promise<string | null> => {
    if (agents.has(sessionId)) return agents.get(sessionId) ?? null;
    let read = reading.get(sessionId);
    if (!read) {
      read = readAgent(client, sessionId).finally(() => reading.delete(sessionId));
      reading.set(sessionId, read);
    }
    const agent = await read;
    remember(sessionId, agent);
    return agent;
  };
  return {
    async authorize(key, sessionId) {
      const agent = await agentOf(sessionId);
      if (!mayUseAgent(key, agent ?? undefined)) throw new GatewayError('forbidden', `key ${key.id} may not use session ${JSON.stringify(sessionId)}: ${agent ? `its agent ${JSON.stringify(agent)} is not one of the key's` : 'it was started from settings, which needs agents "*"'}`);
    },
    remember: (sessionId, agent) => remember(sessionId, agent ?? null),
    agentOf,
  };
}

async function readAgent(client: Client, sessionId: string): Promise<string | null> {
  try {
    const state = await client.workflow.getHandle<typeof agentSession>(sessionId).query(stateQuery);
    return state.agent?.name ?? null;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new GatewayError('not_found', `no session ${JSON.stringify(sessionId)}`);
    throw error;
  }
}
