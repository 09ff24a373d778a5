import { isGrpcDeadlineError, isGrpcServiceError, QueryNotRegisteredError, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { ConfigError } from '../config/config-error';

/**
 * What went wrong, as the one line a person reads and the exit code a script tests.
 * Exit codes: 2 for a mistake in the command line (fix the command), 1 for everything
 * else (the session, the server or the network said no).
 */
export interface ExplainedError {
  message: string;
  exitCode: 1 | 2;
}

/** The Temporal server did not answer at all: wrong TEMPORAL_ADDRESS, or no server running. */
export class ServerUnreachableError extends Error {
  override name = 'ServerUnreachableError';
}

/** gRPC status codes the client can meet here (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNAVAILABLE = 14;

export function explainError(error: unknown, context: { namespace: string; address: string }): ExplainedError {
  if (error instanceof ConfigError) return { message: error.message, exitCode: 2 };
  if (error instanceof ServerUnreachableError) return { message: error.message, exitCode: 1 };
  if (error instanceof WorkflowNotFoundError) {
    // The server answers an Update or a Signal to a closed workflow with this same error;
    // only the message tells "closed" from "never existed".
    if (/already completed/i.test(error.message)) {
      return { message: `session ${error.workflowId} has ended: it takes no more messages, decisions or policy changes`, exitCode: 1 };
    }
    return { message: `no session "${error.workflowId}" in namespace "${context.namespace}"`, exitCode: 1 };
  }
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    return { message: `a session with id "${error.workflowId}" already exists; pick another --id`, exitCode: 1 };
  }
  if (error instanceof WorkflowUpdateFailedError) {
    // A validator's rejection (no such call, the session is ending, a bad policy) arrives
    // as an ApplicationFailure cause whose message was written for people.
    const reason = error.cause instanceof ApplicationFailure ? error.cause.message : (error.cause?.message ?? error.message);
    return { message: `the session refused: ${firstLine(reason)}`, exitCode: 1 };
  }
  if (error instanceof QueryNotRegisteredError) {
    // The SDK raises this for every Query the worker failed; only a missing handler means
    // the workflow is something else. A session that failed to answer (say, a closed run
    // whose replay hit a nondeterminism error) is still a session.
    // The wording of the TypeScript, Go, Java and Python SDKs' workers for an unknown Query.
    if (/did not register a handler|unknown query ?type|query handler .* not found|expected but not found/i.test(error.message)) return { message: `that workflow is not an agent session (${firstLine(error.message)})`, exitCode: 1 };
    return { message: `the session could not answer: ${firstLine(error.message)}`, exitCode: 1 };
  }
  const grpc = grpcCodeOf(error);
  if (grpc === GRPC_NOT_FOUND) {
    const id = /workflow not found for ID: (\S+)/.exec(messageOf(error))?.[1];
    return { message: id ? `no session "${id}" in namespace "${context.namespace}"` : firstLine(messageOf(error)), exitCode: 1 };
  }
  if (grpc === GRPC_FAILED_PRECONDITION && /no poller/i.test(causeMessages(error))) {
    return { message: 'the session did not answer: no worker is polling its task queue (start one with npm run worker)', exitCode: 1 };
  }
  if (isGrpcDeadlineError(error)) {
    return { message: `the session did not answer in time (its worker busy or gone, or replaying a long closed run); try again: ${firstLine(causeMessages(error))}`, exitCode: 1 };
  }
  if (grpc === GRPC_UNAVAILABLE) {
    return { message: `lost the Temporal server at ${context.address}: ${firstLine(messageOf(error))}`, exitCode: 1 };
  }
  return { message: firstLine(causeMessages(error)), exitCode: 1 };
}

/** "Failed to query Workflow" says little; its causes say why. */
function causeMessages(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const message = messageOf(e);
    if (message && !messages.includes(message)) messages.push(message);
  }
  return messages.join(': ');
}

function grpcCodeOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) return e.code;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() || 'unknown error';
}
