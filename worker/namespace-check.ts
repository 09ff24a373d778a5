import type { NativeConnection } from '@temporalio/worker';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { addSearchAttributes, CLI_TYPE_NAMES, createCommand, searchAttributeGaps } from './search-attribute-gaps';

/** The namespace cannot run sessions; the message is the one line to print. */
export class NamespaceCheckError extends Error {
  override name = 'NamespaceCheckError';
}

const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

/**
 * Any other refusal of the check's calls (a Cloud API key without the rights to read or
 * register search attributes, a server without the operator service) is one line too,
 * never a stack trace: what was being done, and the server's own reason.
 */
function refused(doing: string, namespace: string, error: unknown): NamespaceCheckError {
  const code = (error as { code?: unknown }).code;
  const reason = ((error as { details?: unknown }).details || (error instanceof Error ? error.message : String(error))) as string;
  const hint =
    code === GRPC_PERMISSION_DENIED || code === GRPC_UNAUTHENTICATED
      ? ' (check the credentials: TEMPORAL_API_KEY, or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)'
      : '';
  return new NamespaceCheckError(`could not ${doing} namespace "${namespace}": ${reason.split('\n')[0]}${hint}`);
}

export interface NamespaceCheckOptions {
  connection: Pick<NativeConnection, 'workflowService' | 'operatorService'>;
  namespace: string;
  address: string;
  /** Register missing search attributes instead of stopping (`--register-search-attributes`). */
  register: boolean;
}

/**
 * Run before the worker polls. Without its search attributes a namespace fails every
 * session's first workflow task (the session upserts AgentStatus and AgentModel at once),
 * and the worker would only log that as a warning, again and again. Returns the names
 * it registered.
 */
export async function checkNamespace(options: NamespaceCheckOptions): Promise<string[]> {
  const { connection, namespace } = options;
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if ((error as { code?: unknown }).code === GRPC_NOT_FOUND) {
      throw new NamespaceCheckError(`namespace "${namespace}" does not exist on ${options.address} (TEMPORAL_NAMESPACE)`);
    }
    throw refused('describe', namespace, error);
  }
  const gaps = await searchAttributeGaps(connection.operatorService, namespace, AGENT_SEARCH_ATTRIBUTES).catch((error: unknown) => {
    throw refused('list the search attributes of', namespace, error);
  });
  const [wrong] = gaps.wrongType;
  if (wrong) {
    throw new NamespaceCheckError(
      `search attribute ${wrong.key.name} in namespace "${namespace}" is ${wrong.registered}, the agent needs ${CLI_TYPE_NAMES[wrong.key.type]}; a type cannot be changed, so remove it (temporal operator search-attribute remove --namespace ${namespace} --name ${wrong.key.name}) and create it again`,
    );
  }
  if (gaps.missing.length === 0) return [];
  const names = gaps.missing.map((key) => key.name);
  if (!options.register) {
    throw new NamespaceCheckError(
      `namespace "${namespace}" lacks the search attributes ${names.join(', ')}; register them with \`${createCommand(namespace, gaps.missing)}\`, or start the worker with --register-search-attributes (AGENT_REGISTER_SEARCH_ATTRIBUTES=true)`,
    );
  }
  await addSearchAttributes(connection.operatorService, namespace, gaps.missing).catch((error: unknown) => {
    throw refused('register the search attributes of', namespace, error);
  });
  return names;
}
