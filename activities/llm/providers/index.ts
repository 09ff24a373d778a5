import type { ProviderId } from '../../../contracts/model-ref';
import { streamAnthropic } from './anthropic';
import { streamGemini } from './gemini';
import { streamOpenAi } from './openai';
import type { ProviderStream } from './types';

export type { ProviderCall, ProviderStream, StreamProgress } from './types';

/** One streaming adapter per provider of `provider:model`. Typed as a Record so a new ProviderId fails to compile until it has one. */
export const PROVIDER_STREAMS: Record<ProviderId, ProviderStream> = {
  anthropic: streamAnthropic,
  openai: streamOpenAi,
  google: streamGemini,
};
