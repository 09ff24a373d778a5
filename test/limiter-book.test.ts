import { describe, expect, it } from 'vitest';
import { FleetLimitSchema, type AcquireRequest, type FleetLimit } from '../contracts/fleet-limits';
import { ASK_REFRESH_MS, LEASE_LIFETIME_MS, LimiterBook, MAX_OPEN_ASKS } from '../workflows/limiter/limiter-book';

/** The limiter's rules on a fake clock: each test passes the time itself. */

const limit = (fields: Partial<FleetLimit>): FleetLimit => FleetLimitSchema.parse({ provider: 'anthropic', ...fields });

function asker(limits: FleetLimit[]) {
  return (holder: string, fields: Partial<AcquireRequest> = {}): AcquireRequest => ({ holder, attempt: 1, model: 'claude', priority: 'interactive', inputTokens: 100, outputTokens: 50, limits, wait: false, ...fields });
}

/** Asks as the LLM activity's first ask does, and returns the answer the limiter would send. */
function ask(book: LimiterBook, request: AcquireRequest, now: number) {
  book.ask(request, now);
  book.grant(now);
  return book.answer(request.holder);
}

function leaseOf(answer: ReturnType<LimiterBook['answer']>): string {
  if (!answer.granted) throw new Error(`not granted: ${JSON.stringify(answer)}`);
  return answer.lease;
}

describe('the fleet limiter\'s books', () => {
  it('grants within the input-token allowance, and queues the call above it until the first reservation leaves its window', () => {
    const limits = [limit({ inputTokensPerMinute: 250 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const first = leaseOf(ask(book, req('a'), 0));
    leaseOf(ask(book, req('b'), 10));
    expect(ask(book, req('c'), 20)).toEqual({ granted: false, queued: { reason: 'input_tokens', etaMs: 60_000 + 5_000 - 20, position: 1 } });
    expect(book.details(20)).toBe('2 in flight, 1 waiting (1 interactive, 0 batch), the first for input tokens ~65 s · all models input tokens 200/250 per 60 s');
    book.release({ attempt: 1, holder: 'a', lease: first }, 1_000);
    book.grant(60_999);
    expect(book.isGranted('c')).toBe(false);
    book.grant(61_000);
    expect(book.isGranted('c')).toBe(true);
  });

  it('counts a reservation from its grant to one window after its release, and replaces the estimate by the usage the provider reported', () => {
    const limits = [limit({ inputTokensPerMinute: 300 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a', { inputTokens: 200 }), 0));
    expect(ask(book, req('b', { inputTokens: 200 }), 1).granted).toBe(false);
    book.release({ attempt: 1, holder: 'a', lease: a, usage: { inputTokens: 90, outputTokens: 10 } }, 5);
    book.grant(5);
    expect(book.isGranted('b')).toBe(true);
    // 90 + 200 of 300 stay counted for the window after a's release.
    expect(ask(book, req('c', { inputTokens: 20 }), 59_000).granted).toBe(false);
  });

  it('holds calls over the concurrency cap until one in flight is released', () => {
    const limits = [limit({ concurrentCalls: 2 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    leaseOf(ask(book, req('b'), 0));
    const queued = ask(book, req('c'), 0);
    expect(queued.granted === false && 'queued' in queued && queued.queued.reason).toBe('concurrency');
    book.release({ attempt: 1, holder: 'a', lease: a }, 3_000);
    book.grant(3_000);
    expect(book.isGranted('c')).toBe(true);
  });

  it('grants interactive calls before batch ones that asked earlier, and batch ones in the order they asked', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    let lease = leaseOf(ask(book, req('running'), 0));
    ask(book, req('batch-1', { priority: 'batch' }), 1);
    ask(book, req('batch-2', { priority: 'batch' }), 2);
    expect(ask(book, req('interactive', { priority: 'interactive' }), 3)).toMatchObject({ queued: { position: 1 } });
    const order: string[] = [];
    for (let now = 10; order.length < 3; now += 10) {
      book.release({ attempt: 1, holder: order.at(-1) ?? 'running', lease }, now);
      book.grant(now);
      const next = ['interactive', 'batch-1', 'batch-2'].find((h) => book.isGranted(h))!;
      order.push(next);
      lease = leaseOf(book.answer(next));
    }
    expect(order).toEqual(['interactive', 'batch-1', 'batch-2']);
  });

  it('keeps a call behind an earlier one only when both wait for the same limit: another model\'s call goes ahead', () => {
    const limits = [limit({ model: 'claude', inputTokensPerMinute: 150 }), limit({ model: 'haiku', inputTokensPerMinute: 1_000 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('a'), 0));
    expect(ask(book, req('big', { inputTokens: 100 }), 1).granted).toBe(false);
    // It would fit on its own (100 + 40 ≤ 150), but the earlier waiter claimed the bucket.
    expect(ask(book, req('small', { inputTokens: 40 }), 2).granted).toBe(false);
    expect(ask(book, req('other-model', { model: 'haiku' }), 3).granted).toBe(true);
  });

  it('grants a request larger than the whole allowance once the window holds nothing, rather than never', () => {
    const limits = [limit({ inputTokensPerMinute: 100 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a', { inputTokens: 50 }), 0));
    expect(ask(book, req('huge', { inputTokens: 5_000 }), 1).granted).toBe(false);
    book.release({ attempt: 1, holder: 'a', lease: a }, 2);
    book.grant(60_001);
    expect(book.isGranted('huge')).toBe(false);
    book.grant(60_002);
    expect(book.isGranted('huge')).toBe(true);
  });

  it('scales the per-minute figures to the window: 600 requests a minute over 10 s allow 100 in any 10 s', () => {
    const limits = [limit({ requestsPerMinute: 600, windowSeconds: 10 })];
    const book = new LimiterBook();
    const req = asker(limits);
    for (let i = 0; i < 100; i++) leaseOf(ask(book, req(`r${i}`), i));
    expect(ask(book, req('r100'), 100)).toMatchObject({ granted: false, queued: { reason: 'requests' } });
  });

  it('holds every minute to the whole figure when the window is shorter: 30 a minute over 1 s let 30 through, not 60', () => {
    const limits = [limit({ requestsPerMinute: 30, windowSeconds: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    let granted = 0;
    for (let i = 0; i < 120; i++) {
      const now = i * 500;
      const answer = ask(book, req(`r${i}`), now);
      if (answer.granted) {
        granted += now < 60_000 ? 1 : 0;
        book.release({ attempt: 1, holder: `r${i}`, lease: answer.lease }, now);
      } else book.release({ attempt: 1, holder: `r${i}` }, now);
    }
    expect(granted).toBe(30);
  });

  it('takes no stale word: an ask that arrives after its own withdrawal is refused, and a late withdrawal of an earlier attempt leaves the newer one alone', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    book.release({ attempt: 1, holder: 'gone' }, 1);
    expect(book.ask(req('gone'), 2)).toBe(false);
    ask(book, req('retried', { attempt: 2 }), 3);
    book.release({ attempt: 1, holder: 'retried' }, 4);
    book.release({ attempt: 1, holder: 'a', lease: a }, 5);
    book.grant(5);
    expect(book.isGranted('retried')).toBe(true);
    expect(book.isStale({ holder: 'retried', attempt: 1 })).toBe(true);
  });

  it('holds open the waiting asks of only the first eight calls of the queue, so Temporal\'s cap on Updates in flight is never reached', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('running'), 0));
    for (let i = 0; i < 10; i++) ask(book, req(`w${i}`), 1 + i);
    expect(book.mayHold('w8')).toBe(false);
    for (let i = 0; i < MAX_OPEN_ASKS; i++) {
      expect(book.mayHold(`w${i}`)).toBe(true);
      book.listen(`w${i}`, 1);
    }
    book.listen('w0', -1);
    expect(book.mayHold('w0')).toBe(true);
    book.listen('w0', 1);
    expect(book.mayHold('w0')).toBe(false);
  });

  it('does not end a running call\'s lease when its first ask is delivered again', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('x'), 0));
    ask(book, req('q'), 1);
    book.ask(req('x'), 2);
    book.grant(2);
    expect(book.isGranted('q')).toBe(false);
  });

  it('lets a second attempt of the same call take over: its lost attempt\'s lease ends, so it never holds two slots', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('call'), 0));
    expect(ask(book, req('call', { attempt: 2 }), 30_000).granted).toBe(true);
    expect(ask(book, req('other'), 30_001).granted).toBe(false);
  });

  it('keeps a queued call\'s place when its next attempt asks again', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('running'), 0));
    ask(book, req('first'), 1);
    ask(book, req('second'), 2);
    expect(ask(book, req('first', { attempt: 2 }), 3)).toMatchObject({ queued: { position: 1 } });
  });

  it('ends a lease its attempt outlived (ten minutes), so a dead worker\'s call does not keep its slot', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    leaseOf(ask(book, req('dead'), 0));
    book.ask(req('next', { wait: true }), 1);
    book.listen('next', 1);
    // Its open ask refreshed a minute before the lease's end: that end is the next change.
    book.ask(req('next', { wait: true }), LEASE_LIFETIME_MS - 50_000);
    book.grant(LEASE_LIFETIME_MS - 1);
    expect(book.isGranted('next')).toBe(false);
    expect(book.nextChangeAt(LEASE_LIFETIME_MS - 1)).toBe(LEASE_LIFETIME_MS);
    book.grant(LEASE_LIFETIME_MS);
    expect(book.isGranted('next')).toBe(true);
  });

  it('takes the withdrawal of a cancelled call: it leaves the queue, and a lease granted as it left is given back', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    ask(book, req('cancelled'), 1);
    ask(book, req('next'), 2);
    book.release({ attempt: 1, holder: 'a', lease: a }, 3);
    book.grant(3);
    expect(book.isGranted('cancelled')).toBe(true);
    book.release({ attempt: 1, holder: 'cancelled' }, 4);
    book.grant(4);
    expect(book.isGranted('next')).toBe(true);
    // The ask its caller left behind is answered at once, to no one.
    expect(book.refreshDue({ holder: 'cancelled', attempt: 1 }, 4)).toBe(true);
  });

  it('gives a silent waiter up after two refreshes, and sets no time to wake while nobody waits', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    expect(book.nextChangeAt(0)).toBeUndefined();
    ask(book, req('silent'), 1);
    ask(book, req('alive'), 2);
    book.listen('alive', 1);
    expect(book.refreshDue({ holder: 'alive', attempt: 1 }, 2 + ASK_REFRESH_MS)).toBe(true);
    book.ask(req('alive', { wait: true }), 2 + ASK_REFRESH_MS);
    book.release({ attempt: 1, holder: 'a', lease: a }, 1 + 2 * ASK_REFRESH_MS);
    book.grant(1 + 2 * ASK_REFRESH_MS);
    expect(book.isGranted('alive')).toBe(true);
    expect(book.isGranted('silent')).toBe(false);
  });

  it('learns a lower limit from the provider\'s headers, and holds every call of the model until a stated backoff ends', () => {
    const limits = [limit({ inputTokensPerMinute: 10_000 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    book.release({ attempt: 1, holder: 'a', lease: a, observed: { inputTokens: { limit: 150, remaining: 50, resetAt: 30_000 } } }, 100);
    expect(ask(book, req('b'), 200)).toMatchObject({ granted: false, queued: { reason: 'input_tokens' } });
    const other = new LimiterBook();
    const c = leaseOf(ask(other, req('c'), 0));
    other.release({ attempt: 1, holder: 'c', lease: c, backoffUntil: 8_000 }, 10);
    expect(ask(other, req('d'), 20)).toEqual({ granted: false, queued: { reason: 'provider_backoff', etaMs: 7_980, position: 1 } });
    other.grant(8_000);
    expect(other.isGranted('d')).toBe(true);
  });

  it('ignores what the headers said when the limit says learn: false', () => {
    const limits = [limit({ inputTokensPerMinute: 10_000, learn: false })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    book.release({ attempt: 1, holder: 'a', lease: a, observed: { inputTokens: { limit: 150, remaining: 0, resetAt: 30_000 } } }, 100);
    expect(ask(book, req('b'), 200).granted).toBe(true);
  });

  it('hands its books to the next run whole: places, leases and reservations survive continue-as-new', () => {
    const limits = [limit({ concurrentCalls: 1 })];
    const book = new LimiterBook();
    const req = asker(limits);
    const a = leaseOf(ask(book, req('a'), 0));
    ask(book, req('b', { priority: 'batch' }), 1);
    ask(book, req('c'), 2);
    const next = new LimiterBook(JSON.parse(JSON.stringify(book.carry())));
    // Interactive d goes behind interactive c, before batch b.
    expect(ask(next, req('d'), 3)).toMatchObject({ queued: { position: 2 } });
    next.release({ attempt: 1, holder: 'a', lease: a }, 4);
    next.grant(4);
    expect(next.isGranted('c')).toBe(true);
    expect(next.details(4)).toBe('1 in flight, 2 waiting (1 interactive, 1 batch), the first for concurrency ~1 s');
  });
});
