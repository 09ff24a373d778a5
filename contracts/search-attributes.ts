import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/**
 * Custom search attributes of an agent session, shown as columns in the Temporal UI and
 * usable in visibility queries (`AgentStatus = "waiting"`). The workflow sandbox imports
 * this file, so it may import only from `@temporalio/common` / `@temporalio/workflow`.
 *
 * A server must know a key before any workflow upserts it: `startDevServer` registers
 * every key in `AGENT_SEARCH_ATTRIBUTES`; docker-compose users register them once with
 * `temporal operator search-attribute create`.
 */

/** Where the session is in its loop (e.g. `running`, `waiting`, `completed`). */
export const AgentStatus = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);

/** How many model steps the session has taken so far. */
export const AgentStepCount = defineSearchAttributeKey('AgentStepCount', SearchAttributeType.INT);

/** The `provider:model` string the session talks to. */
export const AgentModel = defineSearchAttributeKey('AgentModel', SearchAttributeType.KEYWORD);

/** What the session has spent in USD by the worker's price table; absent until a priced call cost something. */
export const AgentCostUsd = defineSearchAttributeKey('AgentCostUsd', SearchAttributeType.DOUBLE);

export const AGENT_SEARCH_ATTRIBUTES = [AgentStatus, AgentStepCount, AgentModel, AgentCostUsd] as const;

/**
 * The attributes a session of revision 2 is started with (contracts/session-revision.ts):
 * what its first run would upsert, set by the start request instead, which costs no action.
 * A session started with work to do at once (its first message, a sub-agent's task) says `running`.
 */
export function startAttributePairs(model: string, status: 'idle' | 'running'): SearchAttributePair[] {
  return [
    { key: AgentModel, value: model },
    { key: AgentStatus, value: status },
    { key: AgentStepCount, value: 0 },
  ];
}
