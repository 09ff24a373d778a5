import { z } from 'zod';

/**
 * Which commands a session's workflow issues, as a number its input carries (`revision`).
 *
 * A change to the commands a session issues must leave the sessions that recorded the old
 * ones replaying. `patched()` is the usual guard (CONTRIBUTING.md, patch policy), but in
 * this SDK a run that meets a patch upserts `TemporalChangeVersion`, a billable action,
 * once in every run: a guard on a change that saves actions would spend what it saves.
 * The input is free: a run reads its revision from it, a continued run inherits it with
 * the rest of the input, and a session started without one (an earlier release's client,
 * or a start by hand) keeps the commands of the first revision.
 *
 * - 1, the first: what 0.2.0 recorded.
 * - 2: the start request carries the session's search attributes, and a run upserts them
 *   only when one of them changes; an idle session keeps one timer across its waits instead
 *   of starting one per wait (docs/cost.md says what each remaining action buys).
 */
export const SESSION_REVISION = { first: 1, current: 2 } as const;

export type SessionRevision = 1 | 2;

export const SessionRevisionSchema = z
  .number({ error: `must be a revision from ${SESSION_REVISION.first} to ${SESSION_REVISION.current}` })
  .int({ error: `must be a revision from ${SESSION_REVISION.first} to ${SESSION_REVISION.current}` })
  .min(SESSION_REVISION.first, { error: `must be a revision from ${SESSION_REVISION.first} to ${SESSION_REVISION.current}` })
  .max(SESSION_REVISION.current, { error: `must be a revision from ${SESSION_REVISION.first} to ${SESSION_REVISION.current}` });

/** The revision a session's runs issue the commands of. */
export const revisionOf = (input: { revision?: number | undefined }): SessionRevision => (input.revision === 2 ? 2 : 1);

/** The session keeps the first revision's commands: what its history recorded before revisions. */
export const atFirstRevision = (input: { revision?: number | undefined }): boolean => revisionOf(input) === SESSION_REVISION.first;
