import { allHandlersFinished, ApplicationFailure, condition, continueAsNew, setCurrentDetails, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { WORKFLOW_ERROR_TYPES } from '../../contracts/errors';
import { acquireLeaseUpdate, AcquireRequestSchema, releaseLeaseSignal, ReleaseSignalSchema, type AcquireAnswer } from '../../contracts/fleet-limits';
import { LimiterBook, type LimiterCarried } from './limiter-book';

/**
 * Above this many events a run hands its books to a new one: every ask is an Update and
 * every release a signal, so a busy limiter's history grows by the call.
 */
export const EVENTS_PER_RUN = 4_000;

/**
 * `agentLimiter`: the fleet limits of one provider for one task queue's sessions
 * (docs/fleet-limits.md). Started by the first ask (update-with-start) and never ending on
 * its own: idle, it waits on nothing but messages, so it costs no action. While calls wait
 * it keeps one timer, for the next moment the books change by time alone.
 *
 * `eventsPerRun`: the history length at which a run continues as new (a test sets it low).
 */
export async function agentLimiter(carried?: LimiterCarried | null, eventsPerRun = EVENTS_PER_RUN): Promise<void> {
  const book = new LimiterBook(carried ?? undefined);
  let draining = false;
  let changed = false;
  // Grant passes made: every ask of an activation waits for the one pass after it, so a
  // burst of asks costs one pass, not one each (a busy limiter's workflow tasks stay short).
  let passes = 0;

  setHandler(
    acquireLeaseUpdate,
    async (raw): Promise<AcquireAnswer> => {
      // Asks that reach a run about to continue as new are answered by the next run.
      if (draining) return { granted: false, again: true };
      // The parsed ask: the validator has refused one that does not parse, and this fills in the limits' defaults.
      const request = AcquireRequestSchema.parse(raw);
      // A stale ask's attempt is superseded or cancelled: it fails, rather than be told to ask again.
      if (!book.ask(request, Date.now())) {
        throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.internal, message: `a stale ask of ${request.holder} (attempt ${request.attempt}): a newer attempt asked, or this one withdrew`, nonRetryable: true });
      }
      changed = true;
      const asked = passes;
      book.listen(request.holder, 1);
      try {
        await condition(() => draining || passes > asked);
      } finally {
        book.listen(request.holder, -1);
      }
      if (draining && !book.isGranted(request.holder)) return { granted: false, again: true };
      // Queued and not held open: the caller asks again after a pause.
      if (!request.wait || book.isGranted(request.holder) || !book.mayHold(request.holder)) return book.answer(request.holder);
      book.listen(request.holder, 1);
      try {
        await condition(() => draining || book.isGranted(request.holder) || book.refreshDue(request, Date.now()));
      } finally {
        book.listen(request.holder, -1);
      }
      return book.isGranted(request.holder) && !book.isStale(request) ? book.answer(request.holder) : { granted: false, again: true };
    },
    { validator: (request) => void AcquireRequestSchema.parse(request) },
  );
  setHandler(releaseLeaseSignal, (signal) => {
    // A signal cannot be refused: one that is not a release is dropped rather than fail the limiter.
    const parsed = ReleaseSignalSchema.safeParse(signal);
    if (!parsed.success) return;
    book.release(parsed.data, Date.now());
    changed = true;
  });

  // One timer at a time, for the earliest moment the books change by themselves; a later
  // one that is no longer needed fires into a loop that finds nothing to do.
  let timerAt: number | undefined;
  while (!(workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > eventsPerRun)) {
    const now = Date.now();
    book.grant(now);
    passes++;
    setCurrentDetails(book.details(now));
    const next = book.nextChangeAt(now);
    if (next !== undefined && (timerAt === undefined || timerAt <= now || next < timerAt)) {
      timerAt = next;
      void sleep(next - now).then(() => {
        changed = true;
      });
    }
    changed = false;
    await condition(() => changed);
  }
  draining = true;
  await condition(allHandlersFinished);
  await continueAsNew<typeof agentLimiter>(book.carry(), eventsPerRun);
}
