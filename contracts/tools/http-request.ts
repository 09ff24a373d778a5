import { z } from 'zod';
import { defineBuiltinTool } from './tool-definition';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** RFC 9110 token: what a header name may contain. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the tool owns. Hop-by-hop and framing headers would let the model desync the
 * connection, and `Idempotency-Key` is derived from the call, so a model-chosen value
 * could collide with another call's.
 */
export const RESERVED_REQUEST_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
  // Bodies are read as text; a compressed one would reach the model as bytes.
  'accept-encoding',
  'idempotency-key',
] as const;

export const HttpRequestInputSchema = z
  .strictObject({
    method: z.enum(HTTP_METHODS, { error: `method must be one of ${HTTP_METHODS.join(', ')} (uppercase)` }),
    url: z
      .url({ protocol: /^https?$/, error: 'url must be an absolute http:// or https:// URL' })
      .max(8_000, { error: 'url must be at most 8000 characters' })
      .describe('Absolute http:// or https:// URL. The host must be allowlisted by the operator.'),
    headers: z
      .record(
        z.string().regex(HEADER_NAME, { error: 'header names may contain only letters, digits and !#$%&\'*+.^_`|~-' }),
        z.string().regex(/^[^\r\n\0]*$/, { error: 'header values must not contain CR, LF or NUL' }),
      )
      .refine((headers) => !Object.keys(headers).some((name) => (RESERVED_REQUEST_HEADERS as readonly string[]).includes(name.toLowerCase())), {
        error: `these headers are set by the tool and may not be given: ${RESERVED_REQUEST_HEADERS.join(', ')}`,
      })
      .optional()
      .describe('Request headers, e.g. {"content-type": "application/json"}.'),
    body: z
      .string()
      .max(1_000_000, { error: 'body must be at most 1000000 characters' })
      .optional()
      .describe('Request body as text. Not allowed with GET or HEAD.'),
  })
  .refine((input) => input.body === undefined || (input.method !== 'GET' && input.method !== 'HEAD'), {
    error: 'a body is not allowed with GET or HEAD',
    path: ['body'],
  });
export type HttpRequestInput = z.infer<typeof HttpRequestInputSchema>;

export function isReadOnlyMethod(method: HttpMethod): boolean {
  return method === 'GET' || method === 'HEAD';
}

export const httpRequestTool = defineBuiltinTool({
  name: 'http_request',
  description:
    'Sends one HTTP request and returns the status line, a few response headers and the body text ' +
    '(cut at a size limit). Only operator-allowlisted hosts can be reached. Redirects are not followed: ' +
    'a 3xx result shows the Location, which you may request yourself. A 4xx or 5xx status is returned as ' +
    'an error result with the body. GET and HEAD are treated as read-only; other methods may change data ' +
    'and are sent once, with an Idempotency-Key header.',
  input: HttpRequestInputSchema,
  classify: (input) => (isReadOnlyMethod(input.method) ? 'read_only' : 'side_effecting'),
  // The activity's own request deadline (30 s by default) is shorter than startToClose, so a
  // slow target becomes an error result the model reads instead of a failed step. The
  // heartbeat lets Temporal notice a killed worker in seconds while a request is held open.
  timeouts: { startToCloseMs: 60_000, heartbeatMs: 10_000 },
});
