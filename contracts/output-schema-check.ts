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
  try {
    z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    return undefined;
  } catch (error) {
    return `uses what the workflow cannot validate: ${error instanceof Error ? error.message : String(error)}`;
  }
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first chain of local `$ref`s (`#/…`) that leads back into itself, as `a → b → a`; undefined when none does. */
function refCycleIn(root: Node): string | undefined {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...(node as unknown[]));
    if (!isNode(node)) continue;
    const chain: string[] = [];
    for (let at: unknown = node; isNode(at) && typeof at.$ref === 'string' && at.$ref.startsWith('#'); at = pointed(root, at.$ref)) {
      if (chain.includes(at.$ref)) return [...chain, at.$ref].join(' → ');
      chain.push(at.$ref);
    }
    pending.push(...Object.values(node));
  }
  return undefined;
}

/** What a local JSON Pointer (`#/$defs/item`) names in `root`; undefined when nothing. */
function pointed(root: Node, ref: string): unknown {
  const steps = ref.slice(1).split('/').slice(1).map((step) => decodeURIComponent(step).replaceAll('~1', '/').replaceAll('~0', '~'));
  let at: unknown = root;
  for (const step of steps) at = isNode(at) || Array.isArray(at) ? (at as Node)[step] : undefined;
  return at;
}
