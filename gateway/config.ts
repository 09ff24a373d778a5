import { z } from 'zod';
import { parseEnv } from '../config/config-error';
import { splitList } from '../client/config';

/** An origin as a browser sends it in `Origin`: scheme, host and port, nothing after. */
const OriginSchema = z.string().refine(
  (text) => {
    try {
      const url = new URL(text);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
    } catch {
      return false;
    }
  },
  { error: 'must list origins such as https://app.example.com (scheme, host and port only, comma-separated)' },
);

/**
 * The gateway's own variables, parsed once at its start (the connection's and the
 * client's are the client's: client/config.ts). A bad one is one line naming it.
 */
export const GatewayEnvSchema = z.object({
  /** The keys file (gateway/keys.ts): hashes only, written by `agent keys new`. */
  AGENT_GATEWAY_KEYS_FILE: z.string({ error: 'is required: the keys file (create one with agent keys new --file FILE)' }),
  AGENT_GATEWAY_PORT: z.coerce.number({ error: 'must be a port number' }).int({ error: 'must be a port number' }).min(0, { error: 'must be a port number' }).max(65_535, { error: 'must be a port number' }).default(8787),
  /** Loopback by default: listening on every interface is a choice to make, with TLS in front. */
  AGENT_GATEWAY_HOST: z.string().min(1).default('127.0.0.1'),
  /** Browser origins allowed to call the API (CORS); none by default, so only same-origin pages (the chat page) can. */
  AGENT_GATEWAY_CORS_ORIGINS: z.string().transform(splitList).pipe(z.array(OriginSchema)).default([]),
});
export type GatewayEnv = z.output<typeof GatewayEnvSchema>;

export function parseGatewayEnv(env: Record<string, string | undefined>): GatewayEnv {
  return parseEnv(GatewayEnvSchema, env);
}
