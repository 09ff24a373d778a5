import type { Client } from '@temporalio/client';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ClientEnv } from '../client/config';
import type { AgentCatalogue } from '../contracts/agents/agent-catalogue';
import type { SessionFeeds } from './session-feed';

/** A caller's key, as the gateway knows it after checking the bearer token: never the secret. */
export interface GatewayKey {
  /** The key's name in the keys file, for logs and limits. */
  id: string;
  /** The agents this key may start and whose sessions it may use; `'*'` also allows sessions from settings. */
  agents: readonly string[] | '*';
  /** Whether this key may approve or deny a waiting call or a budget pause. */
  approve: boolean;
}

export interface GatewayVariables {
  /** Set by the auth middleware on every route but health and the page's files. */
  key: GatewayKey;
}

export type GatewayApp = OpenAPIHono<{ Variables: GatewayVariables }>;

/** What every route module is given: the client library's connection, and the live feeds. */
export interface GatewayContext {
  client: Client;
  env: ClientEnv;
  feeds: SessionFeeds;
  /** May this key use this session? Reads (and caches) the session's agent; throws the gateway's 404/403 error. */
  authorizeSession(key: GatewayKey, sessionId: string): Promise<void>;
  /** A session a route just started (or forked), with its agent (undefined: from settings): later authorizations need no read. */
  rememberSession(sessionId: string, agent: string | undefined): void;
  /** The session's agent (null: started from settings), read once per session and cached as authorizeSession does; 404 for an unknown session. */
  sessionAgent(sessionId: string): Promise<string | null>;
  /** The worker's agents, kept for a while (gateway/agent-catalogue.ts): every route that lists them shares one read. */
  agents(): Promise<AgentCatalogue>;
}

/** A group of routes: `gateway/app.ts` mounts each on the one app. */
export type RouteModule = (app: GatewayApp, ctx: GatewayContext) => void;
