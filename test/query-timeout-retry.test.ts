import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainError } from '../client/errors';
import { QUERY_ATTEMPTS, retryQueryTimeouts } from '../client/query-timeout-retry';
import { stateQuery } from '../contracts/api';
import { devServerAddress, devServerNamespace } from './temporal-env';

let connection: Connection;
/** What the client raises when a Query's deadline passes: the real gRPC error, as the SDK wraps it. */
let timedOut: unknown;
beforeAll(async () => {
  connection = await Connection.connect({ address: devServerAddress() });
  const client = new Client({ connection, namespace: devServerNamespace() });
  timedOut = await client.withDeadline(Date.now() - 1, () => client.workflow.getHandle('no-such-session').query(stateQuery)).then(
    () => new Error('the Query answered past its deadline'),
    (error: unknown) => error,
  );
});
afterAll(() => connection?.close());

/** An `ask` that fails with `error` the first `failures` times, then answers; and how often it was asked. */
function flaky(failures: number, error: () => unknown) {
  let asked = 0;
  return {
    ask: async () => {
      asked++;
      if (asked <= failures) throw error();
      return 'answer';
    },
    asked: () => asked,
  };
}

describe('a Query the server timed out waiting for a worker', () => {
  it('is asked again, and its answer returned', async () => {
    const query = flaky(QUERY_ATTEMPTS - 1, () => timedOut);
    await expect(retryQueryTimeouts(query.ask)).resolves.toBe('answer');
    expect(query.asked()).toBe(QUERY_ATTEMPTS);
  });

  it(`fails with the timeout after ${QUERY_ATTEMPTS} attempts, explained as a session that did not answer in time`, async () => {
    const query = flaky(QUERY_ATTEMPTS, () => timedOut);
    const error = await retryQueryTimeouts(query.ask).then(() => undefined, (e: unknown) => e);
    expect(error).toBe(timedOut);
    expect(query.asked()).toBe(QUERY_ATTEMPTS);
    expect(explainError(error, { namespace: 'default', address: 'localhost:7233' })).toEqual({
      message: expect.stringMatching(/^the session did not answer in time \(its worker busy or gone, or replaying a long closed run\); try again: /),
      exitCode: 1,
    });
  });

  it('is the only failure asked again: a session that does not exist is reported at once', async () => {
    const query = flaky(1, () => new WorkflowNotFoundError('no such session', 'no-such-session', undefined));
    await expect(retryQueryTimeouts(query.ask)).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(query.asked()).toBe(1);
  });
});
