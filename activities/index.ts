import type { Dispatcher } from 'undici';
import type { LlmActivities } from '../workflows/llm-call';
import type { ToolActivities } from '../workflows/tools/tool-outcome';
import { createLlmActivities, type LlmActivityDeps } from './llm/activity';
import { createToolActivities } from './tools';

export interface ActivityDeps {
  dispatcher: Dispatcher;
  llm: Omit<LlmActivityDeps, 'dispatcher'>;
  tools: { workspaceDir: string; httpAllowlist: string[]; maxResponseBytes: number };
}

export type AgentActivities = LlmActivities & ToolActivities;

export function createActivities(deps: ActivityDeps): AgentActivities {
  return {
    ...createLlmActivities({ dispatcher: deps.dispatcher, ...deps.llm }),
    ...createToolActivities({ dispatcher: deps.dispatcher, ...deps.tools }),
  };
}
