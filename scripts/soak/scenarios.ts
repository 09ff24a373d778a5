import type { ScriptedReply } from '../../testing/scripted-llm/server';

/**
 * The soak's failure mix: what one turn of a session meets. Each scenario scripts the replies
 * the scripted LLM plays for that turn; the model is an `echo…` one, so an attempt nobody
 * scripted (a retry after a worker restart ate a reply) gets a plain answer instead of the
 * scripted LLM's loud 400.
 */

export interface TurnScenario {
  name: string;
  /** Relative weight in the mix. */
  weight: number;
  /** The replies for this turn; `target` is the HTTP target's base URL, `tag` unique per turn. */
  replies(target: string, tag: string): ScriptedReply[];
  /** What the turn should end as when no worker restart interferes; informational only. */
  expected: 'completed' | 'failed';
}

const text = (t: string): ScriptedReply => ({ kind: 'text', text: t });

export const SCENARIOS: readonly TurnScenario[] = [
  { name: 'answer', weight: 3, expected: 'completed', replies: () => [text('A plain answer.')] },
  {
    name: 'rate_limit_with_wait',
    weight: 2,
    expected: 'completed',
    // The server's Retry-After (1 s) is the floor of the wait.
    replies: () => [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, text('After waiting as asked.')],
  },
  { name: 'overloaded_529', weight: 2, expected: 'completed', replies: () => [{ kind: 'status', status: 529 }, { kind: 'status', status: 529 }, text('Third time lucky.')] },
  { name: 'truncated_stream', weight: 2, expected: 'completed', replies: () => [{ kind: 'truncate', text: 'This answer is cut' }, text('The whole answer.')] },
  { name: 'stream_error', weight: 1, expected: 'completed', replies: () => [{ kind: 'stream_error', text: 'Half' }, text('Whole.')] },
  {
    name: 'silent_stall',
    weight: 1,
    expected: 'completed',
    // Silent past the worker's idle timeout: cut as network_error, then retried.
    replies: () => [{ kind: 'text', text: 'Thinking', stall: { ms: 4_000 } }, text('Awake again.')],
  },
  {
    name: 'slow_with_pings',
    weight: 1,
    expected: 'completed',
    // Slower than the idle timeout, but pings are bytes: never cut.
    replies: () => [{ kind: 'text', text: 'Slow but steady', stall: { ms: 2_500, pingEveryMs: 300 } }],
  },
  {
    name: 'tools',
    weight: 3,
    expected: 'completed',
    replies: (target, tag) => [
      {
        kind: 'tool_calls',
        calls: [
          { name: 'calculator', input: { expression: '6*7' } },
          { name: 'http_request', input: { method: 'GET', url: `${target}/ok/${tag}` } },
          { name: 'http_request', input: { method: 'POST', url: `${target}/ok/${tag}`, body: '{}' } },
        ],
      },
      text('Tools done.'),
    ],
  },
  {
    name: 'side_effecting_tool_timeout',
    weight: 1,
    expected: 'failed',
    // Held past the session's http_request timeout: TOOL_OUTCOME_UNKNOWN, the turn fails.
    replies: (target, tag) => [{ kind: 'tool_calls', calls: [{ name: 'http_request', input: { method: 'POST', url: `${target}/hang/${tag}`, body: '{}' } }] }],
  },
  {
    name: 'read_only_tool_timeout',
    weight: 1,
    expected: 'failed',
    // Retried by Temporal (3 attempts), then the step fails.
    replies: (target, tag) => [{ kind: 'tool_calls', calls: [{ name: 'http_request', input: { method: 'GET', url: `${target}/hang/${tag}` } }] }],
  },
  { name: 'auth_401', weight: 1, expected: 'failed', replies: () => [{ kind: 'status', status: 401 }] },
  {
    name: 'overloaded_exhausted',
    weight: 1,
    expected: 'failed',
    // One more 529 than the soak's retry policy allows attempts.
    replies: () => Array.from({ length: 4 }, () => ({ kind: 'status', status: 529 }) as ScriptedReply),
  },
];

/** A small seeded PRNG (mulberry32): the same seed replays the same mix. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function pickScenario(random: () => number, scenarios: readonly TurnScenario[] = SCENARIOS): TurnScenario {
  const total = scenarios.reduce((sum, s) => sum + s.weight, 0);
  let roll = random() * total;
  for (const scenario of scenarios) {
    roll -= scenario.weight;
    if (roll < 0) return scenario;
  }
  return scenarios[scenarios.length - 1] as TurnScenario;
}

/**
 * The turns of session `n` (1-based). Its first turn walks the catalogue, session n taking
 * scenario n, so a run of at least as many sessions as scenarios meets every one of them
 * whatever the seed; the other turns are drawn by weight.
 */
export function planSession(n: number, random: () => number, maxTurns: number, scenarios: readonly TurnScenario[] = SCENARIOS): TurnScenario[] {
  const turns = 1 + Math.floor(random() * maxTurns);
  const first = scenarios[(n - 1) % scenarios.length] as TurnScenario;
  return [first, ...Array.from({ length: turns - 1 }, () => pickScenario(random, scenarios))];
}
