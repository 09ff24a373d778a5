import type { ClientEnv } from '../config';
import type { StartOptions } from '../sessions';
import { parseList, parseModel, parseWholeNumber } from './command';

/** Options of the session itself, shared by `start` and `run`. */
export const SESSION_OPTIONS = {
  model: { type: 'string' },
  system: { type: 'string' },
  id: { type: 'string' },
  'approve-tools': { type: 'string' },
  'approval-timeout': { type: 'string' },
} as const;

export const SESSION_SYNOPSIS = '[--model provider:model] [--system TEXT] [--id ID] [--approve-tools TOOL,…|*] [--approval-timeout SECONDS]';

export function sessionOptionsFrom(
  values: { model?: string; system?: string; id?: string; 'approve-tools'?: string; 'approval-timeout'?: string },
  env: ClientEnv,
): StartOptions {
  return {
    model: parseModel(values.model ?? env.AGENT_MODEL),
    ...(values.system === undefined ? {} : { system: values.system }),
    ...(values.id === undefined ? {} : { workflowId: values.id }),
    // Only side-effecting tools (write_file, http_request) ever wait; `*` means all of them.
    ...(values['approve-tools'] === undefined ? {} : { approvalRequired: parseList('--approve-tools', values['approve-tools']) }),
    ...(values['approval-timeout'] === undefined
      ? {}
      : { approvalTimeoutMs: parseWholeNumber('--approval-timeout', values['approval-timeout'], 1, 7 * 24 * 3600) * 1000 }),
  };
}
