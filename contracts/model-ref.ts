import { z } from 'zod';

export const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

/** `provider:model`, e.g. `anthropic:claude-sonnet-4-5`, `openai:gpt-4o-mini`, `google:gemini-2.5-flash`. */
export const ModelRefSchema = z
  .string()
  .regex(/^(anthropic|openai|google):[A-Za-z0-9._\-/:@]+$/, {
    message: 'model must be "provider:model" with provider one of anthropic, openai, google (e.g. "anthropic:claude-sonnet-4-5")',
  });

export interface ModelRef {
  provider: ProviderId;
  model: string;
}

export function parseModelRef(ref: string): ModelRef {
  const valid = ModelRefSchema.parse(ref);
  const colon = valid.indexOf(':');
  return { provider: valid.slice(0, colon) as ProviderId, model: valid.slice(colon + 1) };
}
