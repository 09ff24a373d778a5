import { defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { PROVIDERS, type ProviderId } from './model-ref';

/**
 * Fleet limits: what every LLM call of a task queue's sessions, on every worker process,
 * may take of one provider account together (docs/fleet-limits.md).
 *
 * One limiter workflow per provider and task queue holds the account's state: the calls in
 * flight, what each reserved or used in the window, what the provider's own rate-limit
 * headers last said. The LLM activity asks it for a lease (the `acquire` Update) just before
 * its request leaves, and gives the lease back (the `release` signal) with what the call
 * used when its response is in. A worker without limits for a provider never asks: no
 * limiter, no action, no latency.
 */

export const LIMITER_WORKFLOW = 'agentLimiter';

/** The limiter of one provider for one task queue's sessions: all its worker processes ask this one. */
export function limiterWorkflowId(taskQueue: string, provider: ProviderId): string {
  return `agent-limiter:${provider}:${taskQueue}`;
}

const count = (what: string) => z.number({ error: `must be a whole number of ${what}` }).int({ error: `must be a whole number of ${what}` }).positive({ error: `must be a positive number of ${what}` });

/**
 * One limit of AGENT_LIMITS_FILE: a provider's (every model of it together), or one
 * model's. A call is held to both its provider's entry and its model's, when there are.
 * Every figure is optional: absent, that resource has no limit of this entry's (unless
 * learned, below).
 */
export const FleetLimitSchema = z.strictObject({
  provider: z.enum(PROVIDERS, { error: `must be one of ${PROVIDERS.join(', ')}` }),
  /** The provider's model name (without `provider:`); absent: the whole provider. */
  model: z.string().min(1).max(200).optional(),
  requestsPerMinute: count('requests').optional(),
  inputTokensPerMinute: count('tokens').optional(),
  outputTokensPerMinute: count('tokens').optional(),
  concurrentCalls: count('calls').optional(),
  /**
   * A shorter window the per-minute figures are also counted in, in seconds: it allows the
   * same rate in proportion (10 s: a sixth of each figure), so bursts are smaller; every
   * minute still holds at most the whole figure.
   */
  windowSeconds: z.number({ error: 'must be a whole number of seconds from 1 to 60' }).int({ error: 'must be a whole number of seconds from 1 to 60' }).min(1, { error: 'must be a whole number of seconds from 1 to 60' }).max(60, { error: 'must be a whole number of seconds from 1 to 60' }).default(60),
  /** Also hold calls to the limits the provider's rate-limit headers state, when lower than these. */
  learn: z.boolean().default(true),
  /** Output tokens a call reserves until its usage is known: the lower of this and its `maxTokens`. */
  outputReserve: count('tokens').default(4_096),
});
export type FleetLimit = z.output<typeof FleetLimitSchema>;

/** Every limit of a worker fleet: at most one per provider and one per provider's model. */
export const FleetLimitsSchema = z
  .array(FleetLimitSchema)
  .max(200, { error: 'must list at most 200 limits' })
  .superRefine((limits, ctx) => {
    const seen = new Set<string>();
    limits.forEach((limit, i) => {
      const key = `${limit.provider}:${limit.model ?? '*'}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: `a second limit for ${limit.model === undefined ? `provider ${limit.provider}` : `${limit.provider}:${limit.model}`}` });
      seen.add(key);
    });
  });

/** AGENT_LIMITS_FILE: `{ "limits": [ … ] }`. */
export const FleetLimitsFileSchema = z.strictObject({ limits: FleetLimitsSchema });
export type FleetLimitsFile = z.output<typeof FleetLimitsFileSchema>;

/** Interactive sessions (the default) are granted before batch ones when calls wait. */
export const SessionPrioritySchema = z.enum(['interactive', 'batch'], { error: 'must be interactive or batch' });
export type SessionPriority = z.infer<typeof SessionPrioritySchema>;

/** What a waiting call waits for, in the order the limiter checks them. */
export type LimitWaitReason = 'provider_backoff' | 'concurrency' | 'requests' | 'input_tokens' | 'output_tokens';

const tokens = z.number().int().nonnegative().max(1_000_000_000);

export const AcquireRequestSchema = z.strictObject({
  /**
   * The call: `${workflowId}/${runId}/${activityId}`, the same on every attempt. A first ask by a
   * holder that already holds a lease (an attempt whose worker died) ends that lease, so a
   * lost attempt never keeps a second slot; one already queued keeps its place.
   */
  holder: z.string().min(1).max(2_000),
  /** The activity's attempt: an ask or a withdrawal of an earlier attempt than the holder's newest is stale. */
  attempt: z.number().int().positive().max(1_000_000),
  /** The provider's model name, without `provider:`. */
  model: z.string().min(1).max(200),
  priority: SessionPrioritySchema,
  /** The request's input, estimated from its body (one token per four characters). */
  inputTokens: tokens,
  /** What the call reserves of the output: the lower of its `maxTokens` and the limit's `outputReserve`. */
  outputTokens: tokens,
  /** The asking worker's limits for this provider: the limiter holds calls to the newest it was sent. */
  limits: z.array(FleetLimitSchema).max(200),
  /** `false`: answer at once, granted or queued. `true`: answer when granted (or `again`). */
  wait: z.boolean(),
});
export type AcquireRequest = z.output<typeof AcquireRequestSchema>;

export type AcquireAnswer =
  | { granted: true; lease: string }
  /** Not granted yet; the holder keeps its place and asks again with `wait: true`. */
  | { granted: false; queued: { reason: LimitWaitReason; etaMs: number; position: number } }
  /** The limiter is continuing as new: ask again, at once; the place is kept. */
  | { granted: false; again: true };

/** A bucket as a provider's rate-limit headers stated it on a response. */
const ObservedBucketSchema = z.strictObject({
  limit: tokens.optional(),
  remaining: tokens.optional(),
  /** Epoch ms when the bucket is full again. */
  resetAt: z.number().int().nonnegative().optional(),
});
export type ObservedBucket = z.infer<typeof ObservedBucketSchema>;

/** What the provider's headers said (anthropic-ratelimit-*, x-ratelimit-*); OpenAI's one token bucket counts as input. */
export const ObservedLimitsSchema = z.strictObject({
  requests: ObservedBucketSchema.optional(),
  inputTokens: ObservedBucketSchema.optional(),
  outputTokens: ObservedBucketSchema.optional(),
});
export type ObservedLimits = z.infer<typeof ObservedLimitsSchema>;

export const ReleaseSignalSchema = z.strictObject({
  holder: z.string().min(1).max(2_000),
  attempt: z.number().int().positive().max(1_000_000),
  /** Absent: the holder withdraws from the queue (its call was cancelled while waiting, or as the grant came). */
  lease: z.string().min(1).max(2_100).optional(),
  /** What the call used, when the provider said; absent: its reservation stands. */
  usage: z.strictObject({ inputTokens: tokens, outputTokens: tokens }).optional(),
  observed: ObservedLimitsSchema.optional(),
  /** The provider answered 429 (or 529) with a wait: no call of this model is granted before this epoch ms. */
  backoffUntil: z.number().int().nonnegative().optional(),
});
export type ReleaseSignal = z.infer<typeof ReleaseSignalSchema>;

export const acquireLeaseUpdate = defineUpdate<AcquireAnswer, [AcquireRequest]>('acquire');
export const releaseLeaseSignal = defineSignal<[ReleaseSignal]>('release');

/** What the LLM activity heartbeats while it waits for a lease, for `watch`, the live stream and the UI. */
export interface LimitWait {
  reason: LimitWaitReason;
  provider: ProviderId;
  model: string;
  /** The limiter's estimate of the wait, from when it answered. */
  etaMs: number;
  /** Epoch ms when the wait began. */
  since: number;
}
