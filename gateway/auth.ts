import type { MiddlewareHandler } from 'hono';
import type { GatewayKey, GatewayVariables } from './context';
import { GatewayError } from './errors';
import type { KeyRing } from './keys';
import { DEFAULT_REQUESTS_PER_MINUTE, type RateLimiter } from './limits';

/**
 * What needs no key: the health check, and the chat page's static files (the page asks
 * for the key and sends it on every API call it makes).
 */
export function isPublic(method: string, path: string): boolean {
  if (path === '/health') return true;
  return (method === 'GET' || method === 'HEAD') && (path === '/' || path.startsWith('/chat/'));
}

/** `Authorization: Bearer <secret>`; anything else is no key at all. */
const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;

/**
 * Checks the bearer key of every request but the public ones, then the key's request
 * limit. The key is never echoed, logged or kept: the routes see only its entry.
 */
export function authMiddleware(options: { keys: KeyRing; limiter: RateLimiter; defaultRequestsPerMinute?: number }): MiddlewareHandler<{ Variables: GatewayVariables }> {
  return async (c, next) => {
    if (isPublic(c.req.method, c.req.path)) return next();
    const header = c.req.header('authorization');
    if (header === undefined) throw new GatewayError('unauthorized', 'Authorization: a bearer key is required (Authorization: Bearer <key>)', { 'WWW-Authenticate': 'Bearer' });
    const secret = BEARER.exec(header)?.[1];
    const key = secret === undefined ? undefined : options.keys.verify(secret);
    if (!key) throw new GatewayError('unauthorized', 'Authorization: the bearer key is not valid', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    const wait = options.limiter.take(key.id, key.requestsPerMinute ?? options.defaultRequestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE);
    if (wait > 0) throw new GatewayError('rate_limited', `key ${key.id} is over its requests per minute; retry in ${wait} s`, { 'Retry-After': String(wait) });
    c.set('key', { id: key.id, agents: key.agents, approve: key.approve });
    return next();
  };
}

/** May this key start (and use the sessions of) this agent? A session started from settings, without an agent, needs `'*'`. */
export function mayUseAgent(key: GatewayKey, agent: string | undefined): boolean {
  if (key.agents === '*') return true;
  return agent !== undefined && key.agents.includes(agent);
}

export function assertMayStart(key: GatewayKey, agent: string | undefined): void {
  if (mayUseAgent(key, agent)) return;
  throw new GatewayError(
    'forbidden',
    agent === undefined ? `agent: key ${key.id} may start only its agents (${(key.agents as readonly string[]).join(', ') || 'none'}); a session from settings needs agents "*"` : `agent: key ${key.id} may not start agent ${JSON.stringify(agent)}`,
  );
}

export function assertMayApprove(key: GatewayKey): void {
  if (!key.approve) throw new GatewayError('forbidden', `key ${key.id} may not approve or deny (its approve is false in the keys file)`);
}
