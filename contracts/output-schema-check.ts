import { z } from 'zod';

/**
 * Whether the workflow can validate answers against an output schema: the JSON Schema is
 * read with zod's `z.fromJSONSchema` (contracts/output-validation.ts), which refuses what it
 * cannot read (if/then/else, not, dependentRequired, unevaluatedProperties, external
 * `$ref`s) rather than ignore it. A chain of `$ref`s that comes back to itself without
 * reaching a schema would overflow the stack on the first answer, so it is refused too.
 * Undefined when it can; else one line saying why not.
 */
export function outputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  const cycle = refCycleIn(schema);
  if (cycle) return `uses what the workflow cannot validate: the $ref chain ${cycle} comes back to itself without reaching a schema`;
  const slow = slowPatternIn(schema);
  if (slow) return `has a pattern the workflow could take too long to check an answer against: ${JSON.stringify(slow.slice(0, 100))} (a backreference, a repeated group holding a quantifier or |, or ${MAX_UNBOUNDED_REPEATS + 1} or more unbounded repeats such as * + {n,}; use a character class, or bounds such as {0,64})`;
  try {
    z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    return undefined;
  } catch (error) {
    return `uses what the workflow cannot validate: ${error instanceof Error ? error.message : String(error)}`;
  }
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The first chain of local `$ref`s (`#/…`) that leads back into itself, as `a → b → a`;
 * undefined when none does. Each ref's chain is followed once (`settled` remembers the refs
 * that reach a schema), so a schema of many refs to one long chain is checked in linear
 * time: it runs in the workflow task, on every schema a message brings.
 */
function refCycleIn(root: Node): string | undefined {
  const settled = new Set<string>();
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...(node as unknown[]));
    if (!isNode(node)) continue;
    const chain = new Set<string>();
    for (let at: unknown = node; isNode(at) && typeof at.$ref === 'string' && at.$ref.startsWith('#') && !settled.has(at.$ref); at = pointed(root, at.$ref)) {
      if (chain.has(at.$ref)) return [...chain, at.$ref].join(' → ');
      chain.add(at.$ref);
    }
    for (const ref of chain) settled.add(ref);
    pending.push(...Object.values(node));
  }
  return undefined;
}

/**
 * Unbounded repeats a pattern may have: with k of them in a row, a backtracking engine can
 * try about n^k ways to fail on a string of n characters. Two keep that quadratic, which
 * answers of the sizes a model writes afford (`^[a-z]+-[0-9]+$` is two); three already
 * took seconds on a 2,500-character answer, past the workflow task's deadlock detection,
 * and a replay would run it again.
 */
const MAX_UNBOUNDED_REPEATS = 2;

/** The first `pattern` (or `patternProperties` key) that could backtrack for too long; undefined when none. */
function slowPatternIn(root: Node): string | undefined {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...(node as unknown[]));
    if (!isNode(node)) continue;
    const patterns = [...(typeof node.pattern === 'string' ? [node.pattern] : []), ...(isNode(node.patternProperties) ? Object.keys(node.patternProperties) : [])];
    const slow = patterns.find((p) => mayBacktrackExponentially(p) || unboundedRepeats(p) > MAX_UNBOUNDED_REPEATS);
    if (slow !== undefined) return slow;
    pending.push(...Object.values(node));
  }
  return undefined;
}

/**
 * Whether a regular expression has what makes a backtracking engine take exponential time
 * on some input: a backreference, or a group repeated by `*`, `+` or `{n,}`/`{n,m}` that
 * itself holds a quantifier or an alternation (star height above one, as safe-regex
 * checks). Conservative: it refuses some that are fast (`(a|b)*`), never one that is slow
 * for these reasons. Polynomial cases are bounded by counting repeats (`unboundedRepeats`).
 */
export function mayBacktrackExponentially(pattern: string): boolean {
  // Per open group: whether it holds a quantifier or an alternation.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return true;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      groups.push(false);
      // `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`: the group's kind, not a quantifier.
      if (pattern[i + 1] === '?') i = pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!' ? Math.max(pattern.indexOf('>', i), i + 2) : i + (pattern[i + 2] === '<' ? 3 : 2);
    }
    else if (c === '|') markGroup(groups);
    else if (c === ')') {
      const held = groups.pop() ?? false;
      const repeats = repeatsAt(pattern, i + 1);
      if (repeats && held) return true;
      // The closed group is itself a quantified part of the group around it.
      if (repeats || held) markGroup(groups);
    } else if (repeatsAt(pattern, i) || c === '?') markGroup(groups);
  }
  return false;
}

/** How many unbounded repeats (`*`, `+`, `{n,}`) a pattern has outside character classes, at any depth. */
export function unboundedRepeats(pattern: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '*' || c === '+') count += pattern[i - 1] === '(' ? 0 : 1;
    else if (c === '{' && /^\{\d+,\}/.test(pattern.slice(i))) count++;
  }
  return count;
}

function markGroup(groups: boolean[]): void {
  if (groups.length > 0) groups[groups.length - 1] = true;
}

/** Whether a repeating quantifier (`*`, `+`, `{n,}`, `{n,m}` with m > 1) starts at `i`. */
function repeatsAt(pattern: string, i: number): boolean {
  const c = pattern[i];
  if (c === '*' || c === '+') return true;
  if (c !== '{') return false;
  const bound = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
  if (!bound) return false;
  if (bound[2] === undefined) return Number(bound[1]) > 1;
  return bound[3] === '' || Number(bound[3]) > 1;
}

/** What a local JSON Pointer (`#/$defs/item`) names in `root`; undefined when nothing. */
function pointed(root: Node, ref: string): unknown {
  const steps = ref.slice(1).split('/').slice(1).map((step) => decodeURIComponent(step).replaceAll('~1', '/').replaceAll('~0', '~'));
  let at: unknown = root;
  for (const step of steps) at = isNode(at) || Array.isArray(at) ? (at as Node)[step] : undefined;
  return at;
}
