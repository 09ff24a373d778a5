/**
 * Whatever the server refuses during the namespace check (rights, an operator service it
 * does not offer) stops the worker with one line naming what was being done and why, and
 * a hint at the credentials when the refusal is about them; never a stack trace.
 */
import { describe, expect, it } from 'vitest';
import { checkNamespace, NamespaceCheckError } from '../worker/namespace-check';

const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });
const rejecting = (error: Error) => () => Promise.reject(error);
const resolving = (value: unknown) => () => Promise.resolve(value);

type Connection = Parameters<typeof checkNamespace>[0]['connection'];
const connection = (services: { describeNamespace?: () => Promise<unknown>; listSearchAttributes?: () => Promise<unknown>; addSearchAttributes?: () => Promise<unknown> }) =>
  ({
    workflowService: { describeNamespace: services.describeNamespace ?? resolving({}) },
    operatorService: { listSearchAttributes: services.listSearchAttributes ?? resolving({ customAttributes: {} }), addSearchAttributes: services.addSearchAttributes ?? resolving({}) },
  }) as unknown as Connection;

async function refusal(services: Parameters<typeof connection>[0], register = false): Promise<NamespaceCheckError> {
  const error = await checkNamespace({ connection: connection(services), namespace: 'prod', address: 'example.tmprl.cloud:7233', register }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(NamespaceCheckError);
  return error as NamespaceCheckError;
}

describe('a namespace check the server refuses', () => {
  it('names the credentials when describing the namespace is denied', async () => {
    const { message } = await refusal({ describeNamespace: rejecting(grpcError(7, 'Request unauthorized.')) });
    expect(message).toBe(
      'could not describe namespace "prod": Request unauthorized. (check the credentials: TEMPORAL_API_KEY, or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
    );
  });

  it('is one line when the search attributes cannot be listed', async () => {
    const { message } = await refusal({ listSearchAttributes: rejecting(grpcError(12, 'unknown service temporal.api.operatorservice.v1.OperatorService\nat line 2')) });
    expect(message).toBe('could not list the search attributes of namespace "prod": unknown service temporal.api.operatorservice.v1.OperatorService');
  });

  it('is one line when registering them is denied', async () => {
    const { message } = await refusal({ addSearchAttributes: rejecting(grpcError(16, 'missing API key')) }, true);
    expect(message).toMatch(/^could not register the search attributes of namespace "prod": missing API key \(check the credentials: /);
    expect(message.split('\n')).toHaveLength(1);
  });
});
