import { QueryNotRegisteredError, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from '@hono/zod-openapi';
import { describeIssues } from '../contracts/api';
import { ConfigError } from '../config/config-error';
import { UnknownAgentError } from '../client/agents';
import { explainError, ServerUnreachableError } from '../client/errors';

/**
 * The gateway's errors: one stable `type` per class of mistake, with the HTTP status that
 * goes with it. What a caller reads is one line naming the field or the setting; never a
 * stack, and never a value it sent (a value may be a secret pasted in the wrong field).
 */
export const GATEWAY_ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;
export type GatewayErrorType = keyof typeof GATEWAY_ERROR_STATUS;

export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    readonly type: GatewayErrorType,
    message: string,
    /** Headers the answer carries, such as `Retry-After` on a 429. */
    readonly headers: Record<string, string> = {},
    /** The request field at fault (`input`, `body.maxSteps`): OpenAI's `param`, which its SDKs show. */
    readonly param?: string,
  ) {
    super(message);
  }
  get status(): ContentfulStatusCode {
    return GATEWAY_ERROR_STATUS[this.type];
  }
}

/** The body of every error answer, as the OpenAPI document declares it. */
export const ErrorBodySchema = z
  .object({
    error: z.object({
      type: z.enum(Object.keys(GATEWAY_ERROR_STATUS) as [GatewayErrorType, ...GatewayErrorType[]]),
      message: z.string(),
      /** On the OpenAI-compatible routes only, where the OpenAI SDKs read them: the field at fault, or null. */
      param: z.string().nullable().optional(),
      code: z.string().nullable().optional(),
    }),
  })
  .openapi('Error');
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** The routes an OpenAI SDK calls: their errors also carry OpenAI's `param` and `code`, which its error classes read. */
const OPENAI_PATHS = /^\/v1\/(responses|models)(\/|$)/;

/** A request's input that its schema refused, e.g. `body.maxSteps: must be at most 1000`. */
export function invalidInput(target: string, error: z.ZodError): GatewayError {
  const where = target === 'json' ? 'body' : target;
  const prefixed = new z.ZodError(error.issues.map((issue) => ({ ...issue, path: [where, ...issue.path] })));
  const first = error.issues[0]?.path.join('.');
  return new GatewayError('invalid_request', describeIssues(prefixed), {}, first === '' ? undefined : first);
}

/**
 * Any error of a route as the gateway answers it. The client library's own errors keep
 * their one line (client/errors.ts words them for people); anything unexpected is
 * `internal`, its message only in the gateway's log.
 */
export function toGatewayError(error: unknown, namespace: string): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof HTTPException) {
    // Hono's own refusals: a body that is not JSON, or one over the size limit.
    if (error.status === 413) return new GatewayError('payload_too_large', error.message || 'the request body is too large');
    if (error.status === 400) return new GatewayError('invalid_request', /json/i.test(error.message) ? 'body: not valid JSON' : firstLine(error.message));
    return new GatewayError(error.status >= 500 ? 'internal' : 'invalid_request', firstLine(error.message));
  }
  const explained = () => explainError(error, { namespace, address: '' }).message;
  if (error instanceof UnknownAgentError) return new GatewayError('not_found', error.message);
  if (error instanceof ConfigError) return new GatewayError('invalid_request', error.message);
  if (error instanceof ServerUnreachableError) return new GatewayError('unavailable', 'the Temporal server is unreachable');
  if (error instanceof WorkflowNotFoundError) {
    // An Update to a closed session comes back as "not found … already completed".
    return /already completed/i.test(error.message) ? new GatewayError('conflict', explained()) : new GatewayError('not_found', `no session ${JSON.stringify(error.workflowId)}`);
  }
  if (error instanceof WorkflowExecutionAlreadyStartedError) return new GatewayError('conflict', explained());
  if (error instanceof WorkflowUpdateFailedError) return new GatewayError('conflict', explained());
  if (error instanceof QueryNotRegisteredError) return new GatewayError('conflict', explained());
  return new GatewayError('internal', 'the gateway failed to answer; its log says why');
}

export function errorResponse(c: Context, error: GatewayError): Response {
  const openAi = OPENAI_PATHS.test(c.req.path) ? { param: error.param ?? null, code: error.type } : {};
  const body: ErrorBody = { error: { type: error.type, message: error.message, ...openAi } };
  return c.json(body, error.status, error.headers);
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() || 'invalid request';
}
