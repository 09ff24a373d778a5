import { isGrpcDeadlineError } from '@temporalio/client';

/**
 * How many times a read asks a Query that the server gave up on. Without a deadline of
 * the caller's, the server waits about 30 s for a worker to answer; a Query to a closed
 * run is answered by replaying its whole history, which a worker busy with live sessions
 * can take longer than that to get to. The Query writes nothing, so asking again is safe.
 * Under a deadline of the caller's (`watch` has one), the attempts after it fail at once.
 */
export const QUERY_ATTEMPTS = 3;

/** `ask`, asked again while the server times it out waiting for a worker, up to {@link QUERY_ATTEMPTS} times in all. */
export async function retryQueryTimeouts<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= QUERY_ATTEMPTS || !isGrpcDeadlineError(error)) throw error;
    }
  }
}
