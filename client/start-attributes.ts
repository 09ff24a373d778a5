import type { SearchAttributePair } from '@temporalio/common';
import { startAttributePairs } from '../contracts/search-attributes';

/** The start options of a session of revision 2: its search attributes (contracts/search-attributes.ts). */
export function startAttributes(model: string, status: 'idle' | 'running'): { typedSearchAttributes: SearchAttributePair[] } {
  return { typedSearchAttributes: startAttributePairs(model, status) };
}

/**
 * A namespace no worker has started on yet may lack the attributes (a worker registers them,
 * docs/operations.md). The start is then made again without them: the session's first run
 * upserts them itself, as a session of the first revision does, once a worker has made them known.
 */
export async function startingWithAttributes<T>(start: (withAttributes: boolean) => Promise<T>): Promise<T> {
  try {
    return await start(true);
  } catch (error) {
    if (!unknownAttribute(error)) throw error;
    return start(false);
  }
}

/** Temporal's INVALID_ARGUMENT for a search attribute the namespace has no mapping for, at any depth of causes. */
function unknownAttribute(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (/no mapping defined for search attribute/i.test(`${e.message} ${(e as { details?: unknown }).details ?? ''}`)) return true;
  }
  return false;
}
