import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

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
