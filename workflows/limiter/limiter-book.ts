import type { AcquireAnswer, AcquireRequest, FleetLimit, LimitWaitReason, ObservedBucket, ObservedLimits, ReleaseSignal, SessionPriority } from '../../contracts/fleet-limits';

/**
 * The fleet limiter's books (docs/fleet-limits.md): what one provider account has granted,
 * to whom, and who waits. Pure, with the time passed in, so the rules are tested with a
 * fake clock and the workflow around it (limiter-workflow.ts) only carries messages.
 */

/** An LLM attempt cannot live longer (its activity's startToClose): a lease older than this belongs to a dead attempt. */
export const LEASE_LIFETIME_MS = 10 * 60_000;
/**
 * A waiting ask is answered `again` after this long and asked anew, so a waiter whose
 * worker died (its Update never returns to anyone) is known by its silence: one not heard
 * from for two of these leaves the queue, and a grant nobody came for is given back.
 */
export const ASK_REFRESH_MS = 60_000;
/**
 * Waiting asks held open at once. Temporal lets a workflow have only a few Updates in
 * flight (`maxInFlightUpdates`, 10 by default, also on Temporal Cloud): the first waiters of
 * the queue are held open, so a grant reaches them at once, and the rest are answered at
 * once and ask again after a pause, leaving two for the asks that come and go (one refused
 * for the cap is asked again after a short pause, fleet-lease.ts).
 */
export const MAX_OPEN_ASKS = 8;
/** How long a call is expected to hold its slot before any was measured: the estimate of a concurrency wait. */
const FIRST_CALL_ESTIMATE_MS = 5_000;

type Resource = 'requests' | 'input_tokens' | 'output_tokens';
const RESOURCES: readonly Resource[] = ['requests', 'input_tokens', 'output_tokens'];
const PER_MINUTE: Record<Resource, 'requestsPerMinute' | 'inputTokensPerMinute' | 'outputTokensPerMinute'> = {
  requests: 'requestsPerMinute',
  input_tokens: 'inputTokensPerMinute',
  output_tokens: 'outputTokensPerMinute',
};
const OBSERVED: Record<Resource, keyof ObservedLimits> = { requests: 'requests', input_tokens: 'inputTokens', output_tokens: 'outputTokens' };

/** What one granted call counts against its buckets: from its grant until one window after its release. */
interface Reservation {
  holder: string;
  attempt: number;
  lease: string;
  model: string;
  grantedAt: number;
  releasedAt?: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
}

/** What the books keep of an ask: not the limits it carried, which the books hold once. */
type Ask = Omit<AcquireRequest, 'limits'>;

interface Waiter {
  holder: string;
  /** Its newest attempt's ask. */
  request: Ask;
  /** Its place: the order of first asks, kept across re-asks and continue-as-new. */
  arrival: number;
  lastAskAt: number;
  /** Granted, not yet told: the next ask of this holder gets it. */
  lease?: string;
  /** Why it still waits, from the last grant pass. */
  blocked?: { reason: LimitWaitReason; etaMs: number };
}

/** One bucket as the provider's headers last stated it for a model. */
interface Learned extends ObservedBucket {
  at: number;
  /** Granted of this bucket since it was observed: the provider's `remaining` did not see it yet. */
  spentSince: number;
}

/** Everything a limiter run hands its next run (continue-as-new): the books as they stand. */
export interface LimiterCarried {
  limits: FleetLimit[];
  reservations: Reservation[];
  waiters: Waiter[];
  learned: Record<string, Partial<Record<Resource, Learned>>>;
  backoffUntil: Record<string, number>;
  /** Holders that withdrew lately, with the attempt that did: a late ask of it is stale. */
  withdrawn?: Record<string, { attempt: number; at: number }>;
  seq: number;
  meanCallMs?: number;
}

/** Who a limit counts: every call of its provider, or only its model's. */
function holds(limit: FleetLimit, model: string): boolean {
  return limit.model === undefined || limit.model === model;
}

function entryKey(limit: FleetLimit): string {
  return limit.model === undefined ? '*' : `model:${limit.model}`;
}

/** A per-minute figure over a window of `windowSeconds`: a shorter window allows as much in proportion. */
function allowance(perMinute: number, windowSeconds: number): number {
  return Math.ceil((perMinute * windowSeconds) / 60);
}

const ORDER: Record<SessionPriority, number> = { interactive: 0, batch: 1 };

/** A check that holds a waiter back: why, until about when, and which bucket it claims so later waiters do not take it. */
interface Hold {
  reason: LimitWaitReason;
  etaMs: number;
  claims: string;
}

export class LimiterBook {
  #limits: FleetLimit[];
  #reservations: Reservation[];
  #waiters: Map<string, Waiter>;
  #learned: Record<string, Partial<Record<Resource, Learned>>>;
  #backoffUntil: Record<string, number>;
  #withdrawn: Record<string, { attempt: number; at: number }>;
  #seq: number;
  #meanCallMs: number | undefined;
  /** Holders whose waiting ask is open now (not carried: a new run has none open). */
  #listening = new Map<string, number>();

  constructor(carried?: LimiterCarried) {
    this.#limits = carried?.limits ?? [];
    this.#reservations = carried?.reservations ?? [];
    this.#waiters = new Map((carried?.waiters ?? []).map((w) => [w.holder, w]));
    this.#learned = carried?.learned ?? {};
    this.#backoffUntil = carried?.backoffUntil ?? {};
    this.#withdrawn = carried?.withdrawn ?? {};
    this.#seq = carried?.seq ?? 0;
    this.#meanCallMs = carried?.meanCallMs;
  }

  /**
   * An ask; `false` when it is stale: an earlier attempt's than one the books have heard
   * from, or one that withdrew (its Update reached the limiter after its withdrawal).
   * A first ask of a newer attempt is a call whose last attempt died: the older attempts'
   * leases end now (their reservations stand for their window), and it asks like any
   * other; a holder already queued keeps its place.
   */
  ask(request: AcquireRequest, now: number): boolean {
    const { limits, ...ask } = request;
    this.#limits = limits;
    const kept = this.#waiters.get(request.holder);
    if (this.isStale(request)) return false;
    // A grant the dead attempt never came for is this attempt's to take.
    if (!request.wait) this.#endLeasesOf(request.holder, now, { before: request.attempt, except: kept?.lease });
    this.#waiters.set(request.holder, kept ? { ...kept, request: ask, lastAskAt: now } : { holder: request.holder, request: ask, arrival: this.#seq++, lastAskAt: now });
    return true;
  }

  /** An ask of an earlier attempt than the holder's newest, or of one that withdrew. */
  isStale(request: Pick<AcquireRequest, 'holder' | 'attempt'>): boolean {
    const gone = this.#withdrawn[request.holder];
    const kept = this.#waiters.get(request.holder);
    return (gone !== undefined && request.attempt <= gone.attempt) || (kept !== undefined && kept.request.attempt > request.attempt);
  }

  /** The answer an ask gets now: its lease (it stops waiting), or where it stands in the queue. */
  answer(holder: string): AcquireAnswer {
    const waiter = this.#waiters.get(holder);
    if (waiter?.lease !== undefined) {
      this.#waiters.delete(holder);
      return { granted: true, lease: waiter.lease };
    }
    const blocked = waiter?.blocked ?? { reason: 'concurrency' as const, etaMs: 0 };
    return { granted: false, queued: { ...blocked, position: this.#queue().filter((w) => w.lease === undefined).findIndex((w) => w.holder === holder) + 1 } };
  }

  isGranted(holder: string): boolean {
    return this.#waiters.get(holder)?.lease !== undefined;
  }

  /** A waiting ask opened (`+1`) or answered (`-1`). */
  listen(holder: string, delta: 1 | -1): void {
    const open = (this.#listening.get(holder) ?? 0) + delta;
    if (open > 0) this.#listening.set(holder, open);
    else this.#listening.delete(holder);
  }

  /** Whether the holder's waiting ask may stay open: it is among the first waiters, and few are open. */
  mayHold(holder: string): boolean {
    const open = [...this.#listening.values()].reduce((sum, n) => sum + n, 0);
    const place = this.#queue().filter((w) => w.lease === undefined).findIndex((w) => w.holder === holder);
    return open < MAX_OPEN_ASKS && place >= 0 && place < MAX_OPEN_ASKS;
  }

  /**
   * A waiting ask open this long is answered `again`, so that its silence afterwards means
   * its worker is gone; so is one whose holder withdrew meanwhile (its caller left it
   * behind), or whose newer attempt asked.
   */
  refreshDue(request: Pick<AcquireRequest, 'holder' | 'attempt'>, now: number): boolean {
    const waiter = this.#waiters.get(request.holder);
    return waiter === undefined || this.isStale(request) || now - waiter.lastAskAt >= ASK_REFRESH_MS;
  }

  /**
   * A release. With a lease: the call is over; its usage, when the provider said, replaces
   * what it reserved, and its reservation counts for one window more. Without: the holder
   * withdraws (its call was cancelled while waiting, or as the grant came), leaving the queue
   * and giving back a lease it may have been granted. What the provider's headers said is
   * learned either way.
   */
  release(signal: ReleaseSignal, now: number): void {
    const reservation = signal.lease === undefined ? undefined : this.#reservations.find((r) => r.lease === signal.lease);
    if (signal.lease === undefined) {
      // A late withdrawal of an earlier attempt leaves the newer one's place and lease alone.
      this.#endLeasesOf(signal.holder, now, { before: signal.attempt + 1 });
      if ((this.#waiters.get(signal.holder)?.request.attempt ?? 0) <= signal.attempt) this.#waiters.delete(signal.holder);
      this.#withdrawn[signal.holder] = { attempt: Math.max(signal.attempt, this.#withdrawn[signal.holder]?.attempt ?? 0), at: now };
    } else if (reservation) {
      if (reservation.releasedAt === undefined) {
        reservation.releasedAt = now;
        const took = now - reservation.grantedAt;
        this.#meanCallMs = this.#meanCallMs === undefined ? took : Math.round(this.#meanCallMs * 0.8 + took * 0.2);
      }
      if (signal.usage) {
        reservation.input_tokens = signal.usage.inputTokens;
        reservation.output_tokens = signal.usage.outputTokens;
      }
    }
    if (!reservation) return;
    if (signal.observed) this.#learn(reservation.model, signal.observed, now);
    if (signal.backoffUntil !== undefined && signal.backoffUntil > (this.#backoffUntil[reservation.model] ?? 0)) this.#backoffUntil[reservation.model] = signal.backoffUntil;
  }

  /**
   * Grants every waiter that fits, interactive ones before batch ones, each in the order
   * they first asked. A waiter that does not fit claims the bucket that holds it, so no
   * later waiter takes what it waits for; a later waiter held only by other buckets (another
   * model's, say) is not kept behind it.
   */
  grant(now: number): void {
    this.#expire(now);
    const claimed = new Set<string>();
    for (const waiter of this.#queue()) {
      if (waiter.lease !== undefined) continue;
      const hold = this.#holdOf(waiter.request, now, claimed);
      if (hold) {
        waiter.blocked = { reason: hold.reason, etaMs: hold.etaMs };
        claimed.add(hold.claims);
        continue;
      }
      const { holder, attempt, model, inputTokens, outputTokens } = waiter.request;
      const lease = `${holder}#${this.#seq++}`;
      this.#reservations.push({ holder, attempt, lease, model, grantedAt: now, requests: 1, input_tokens: inputTokens, output_tokens: outputTokens });
      for (const resource of RESOURCES) {
        const learned = this.#learned[model]?.[resource];
        if (learned) learned.spentSince += { requests: 1, input_tokens: inputTokens, output_tokens: outputTokens }[resource];
      }
      waiter.lease = lease;
      delete waiter.blocked;
    }
  }

  /**
   * When the books next change by themselves, while anyone waits: a reservation leaves its
   * window, a backoff or a learned reset ends, a lease outlives its attempt, a silent waiter
   * or an unclaimed grant is given up, an open ask is due to be answered `again`. Nothing
   * while nobody waits: an idle limiter sets no timer.
   */
  nextChangeAt(now: number): number | undefined {
    // A grant whose ask is open is told in this activation: nothing to wake for.
    const waiting = [...this.#waiters.values()].filter((w) => !(w.lease !== undefined && this.#listening.has(w.holder)));
    if (waiting.length === 0) return undefined;
    const windows = [...new Set(this.#limits.map((l) => l.windowSeconds * 1000)), 60_000];
    const times = [
      ...this.#reservations.flatMap((r) => (r.releasedAt === undefined ? [r.grantedAt + LEASE_LIFETIME_MS] : windows.map((w) => r.releasedAt! + w))),
      ...Object.values(this.#backoffUntil),
      ...Object.values(this.#learned).flatMap((buckets) => Object.values(buckets).map((b) => b.resetAt ?? 0)),
      ...waiting.map((w) => (w.lease !== undefined ? (this.#reservations.find((r) => r.lease === w.lease)?.grantedAt ?? now) : w.lastAskAt) + (this.#listening.has(w.holder) || w.lease !== undefined ? ASK_REFRESH_MS : 2 * ASK_REFRESH_MS)),
    ];
    let next: number | undefined;
    for (const t of times) if (t > now && (next === undefined || t < next)) next = t;
    return next;
  }

  /** A line for the limiter's page in the Temporal UI: in flight, waiting, and what the tightest bucket holds. */
  details(now: number): string {
    const inFlight = this.#reservations.filter((r) => r.releasedAt === undefined).length;
    const queued = this.#queue().filter((w) => w.lease === undefined);
    const batch = queued.filter((w) => w.request.priority === 'batch').length;
    const head = queued[0]?.blocked;
    const waiting = queued.length === 0 ? 'none waiting' : `${queued.length} waiting (${queued.length - batch} interactive, ${batch} batch)${head ? `, the first for ${head.reason.replace('_', ' ')} ~${Math.ceil(head.etaMs / 1000)} s` : ''}`;
    const usage = this.#limits.flatMap((limit) =>
      RESOURCES.flatMap((resource) => {
        const perMinute = limit[PER_MINUTE[resource]];
        if (perMinute === undefined) return [];
        const used = this.#counted((r) => holds(limit, r.model), limit.windowSeconds * 1000, now).reduce((sum, r) => sum + r[resource], 0);
        return [`${limit.model ?? 'all models'} ${resource.replace('_', ' ')} ${used}/${allowance(perMinute, limit.windowSeconds)} per ${limit.windowSeconds} s`];
      }),
    );
    return [`${inFlight} in flight, ${waiting}`, ...usage].join(' · ');
  }

  carry(): LimiterCarried {
    return {
      limits: this.#limits,
      reservations: this.#reservations,
      waiters: [...this.#waiters.values()],
      learned: this.#learned,
      backoffUntil: this.#backoffUntil,
      withdrawn: this.#withdrawn,
      seq: this.#seq,
      ...(this.#meanCallMs === undefined ? {} : { meanCallMs: this.#meanCallMs }),
    };
  }

  #queue(): Waiter[] {
    return [...this.#waiters.values()].sort((a, b) => ORDER[a.request.priority] - ORDER[b.request.priority] || a.arrival - b.arrival);
  }

  /** Ends the holder's leases still in flight (of attempts `before` one, but `except`), as of now: what they reserved counts for its window. */
  #endLeasesOf(holder: string, now: number, which: { before?: number; except?: string | undefined } = {}): void {
    for (const r of this.#reservations) {
      if (r.holder === holder && r.releasedAt === undefined && r.lease !== which.except && r.attempt < (which.before ?? Infinity)) r.releasedAt = now;
    }
  }

  /**
   * What time alone changes: leases older than an attempt can live end; a grant nobody
   * came for within an ask's refresh is given back; a waiter silent for two refreshes has
   * left; reservations out of every window are forgotten.
   */
  #expire(now: number): void {
    for (const r of this.#reservations) if (r.releasedAt === undefined && now - r.grantedAt >= LEASE_LIFETIME_MS) r.releasedAt = r.grantedAt + LEASE_LIFETIME_MS;
    for (const w of [...this.#waiters.values()]) {
      const grantedAt = w.lease === undefined ? undefined : this.#reservations.find((r) => r.lease === w.lease)?.grantedAt;
      if (w.lease !== undefined && (grantedAt === undefined || now - grantedAt >= ASK_REFRESH_MS) && !this.#listening.has(w.holder)) {
        this.#endLeasesOf(w.holder, now);
        this.#waiters.delete(w.holder);
      } else if (w.lease === undefined && !this.#listening.has(w.holder) && now - w.lastAskAt >= 2 * ASK_REFRESH_MS) {
        this.#waiters.delete(w.holder);
      }
    }
    const longest = Math.max(60_000, ...this.#limits.map((l) => l.windowSeconds * 1000));
    this.#reservations = this.#reservations.filter((r) => r.releasedAt === undefined || now - r.releasedAt < longest);
    for (const [model, until] of Object.entries(this.#backoffUntil)) if (until <= now) delete this.#backoffUntil[model];
    for (const [holder, gone] of Object.entries(this.#withdrawn)) if (now - gone.at >= 2 * ASK_REFRESH_MS) delete this.#withdrawn[holder];
    for (const buckets of Object.values(this.#learned)) {
      for (const resource of RESOURCES) if ((buckets[resource]?.resetAt ?? Infinity) <= now) delete buckets[resource];
    }
  }

  /** Reservations a bucket counts at `now`: its calls in flight, and (but for concurrency, `windowMs` 0) those released less than its window ago. */
  #counted(counts: (r: Reservation) => boolean, windowMs: number, now: number): Reservation[] {
    return this.#reservations.filter((r) => counts(r) && (r.releasedAt === undefined || now - r.releasedAt < windowMs));
  }

  /** The first check, in the order of LimitWaitReason, that holds `request` back now; none: it is granted. */
  #holdOf(request: Ask, now: number, claimed: ReadonlySet<string>): Hold | undefined {
    const { model } = request;
    const backoff = this.#backoffUntil[model];
    if (backoff !== undefined && backoff > now) return { reason: 'provider_backoff', etaMs: backoff - now, claims: `backoff:${model}` };
    const holding = this.#limits.filter((l) => holds(l, model));
    const mean = this.#meanCallMs ?? FIRST_CALL_ESTIMATE_MS;
    for (const limit of holding) {
      if (limit.concurrentCalls === undefined) continue;
      const inFlight = this.#counted((r) => holds(limit, r.model), 0, now);
      const claims = `${entryKey(limit)}:concurrency`;
      if (claimed.has(claims) || inFlight.length >= limit.concurrentCalls) {
        return { reason: 'concurrency', etaMs: Math.max(0, Math.min(mean, ...inFlight.map((r) => r.grantedAt + mean - now))), claims };
      }
    }
    const learns = holding.some((l) => l.learn);
    for (const resource of RESOURCES) {
      const need = { requests: 1, input_tokens: request.inputTokens, output_tokens: request.outputTokens }[resource];
      for (const limit of holding) {
        const perMinute = limit[PER_MINUTE[resource]];
        if (perMinute === undefined) continue;
        // A shorter window smooths bursts; every minute still holds the whole figure at most.
        const windows: Array<[number, number]> = limit.windowSeconds < 60 ? [[limit.windowSeconds * 1000, allowance(perMinute, limit.windowSeconds)], [60_000, perMinute]] : [[60_000, perMinute]];
        for (const [windowMs, allowed] of windows) {
          const hold = this.#bucketHold(resource, `${entryKey(limit)}:${resource}:${windowMs}`, this.#counted((r) => holds(limit, r.model), windowMs, now), allowed, need, windowMs, now, claimed);
          if (hold) return hold;
        }
      }
      const learned = learns ? this.#learned[model]?.[resource] : undefined;
      if (!learned) continue;
      // The provider's figure is per minute and per model, whatever window this fleet counts in.
      const claims = `learned:${model}:${resource}`;
      if (learned.limit !== undefined) {
        const hold = this.#bucketHold(resource, claims, this.#counted((r) => r.model === model, 60_000, now), learned.limit, need, 60_000, now, claimed);
        if (hold) return hold;
      }
      // What the provider said is left, less what was granted since it said so.
      if (learned.remaining !== undefined && learned.resetAt !== undefined && learned.resetAt > now && learned.remaining - learned.spentSince < need) {
        return { reason: resource, etaMs: learned.resetAt - now, claims };
      }
    }
    return undefined;
  }

  /**
   * One bucket. A request fits when what the window holds plus it stays within the
   * allowance, or when the window holds nothing: a request larger than the whole allowance
   * is granted alone rather than never. A bucket an earlier waiter claimed holds everyone
   * after it.
   */
  #bucketHold(resource: Resource, claims: string, counted: Reservation[], allowed: number, need: number, windowMs: number, now: number, claimed: ReadonlySet<string>): Hold | undefined {
    let used = counted.reduce((sum, r) => sum + r[resource], 0);
    if (!claimed.has(claims) && (used === 0 || used + need <= allowed)) return undefined;
    // When enough leaves the window: released ones at release + window; those in flight are
    // expected to end after a mean call.
    const mean = this.#meanCallMs ?? FIRST_CALL_ESTIMATE_MS;
    const leaving = counted.map((r) => ({ at: (r.releasedAt ?? Math.max(now, r.grantedAt + mean)) + windowMs, amount: r[resource] })).sort((a, b) => a.at - b.at);
    let etaMs = windowMs;
    for (const { at, amount } of leaving) {
      used -= amount;
      if (used === 0 || used + need <= allowed) {
        etaMs = Math.max(0, at - now);
        break;
      }
    }
    return { reason: resource, etaMs, claims };
  }

  #learn(model: string, observed: ObservedLimits, now: number): void {
    const buckets = (this.#learned[model] ??= {});
    for (const resource of RESOURCES) {
      const bucket = observed[OBSERVED[resource]];
      if (bucket) buckets[resource] = { ...bucket, at: now, spentSince: 0 };
    }
  }
}
