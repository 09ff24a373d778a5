/**
 * The demo model's structured answer (demo-model.ts): a value of the request's schema that
 * carries what it would have said as text, so a user trying `--output-schema` offline gets
 * an answer the workflow accepts. The sentence goes into the first string the schema asks
 * for; everything else gets the plainest value its schema allows (the first of an `enum`
 * or `anyOf`, the `minimum`, `minItems` items, every property of an object). A keyword it
 * does not read (`pattern`, `format`…) may make the value invalid: the workflow then asks
 * again, and the demo answers the same, as a model that cannot do better would.
 */
export function demoValue(schema: unknown, sentence: string): unknown {
  return valueOf(schema, { sentence, root: schema }, 0);
}

interface State {
  /** Taken by the first string: later strings are empty. */
  sentence: string | undefined;
  root: unknown;
}

/** How deep a value goes: a recursive schema ends in null there instead of recursing forever. */
const MAX_DEPTH = 16;

function valueOf(schema: unknown, state: State, depth: number): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (typeof schema.$ref === 'string') return valueOf(resolve(state.root, schema.$ref), state, depth + 1);
  const alternative = [schema.anyOf, schema.oneOf].find((list) => Array.isArray(list) && list.length > 0) as unknown[] | undefined;
  if (alternative) return valueOf(alternative[0], state, depth + 1);
  switch (typeOf(schema)) {
    case 'object':
      return Object.fromEntries(Object.entries(isRecord(schema.properties) ? schema.properties : {}).map(([name, property]) => [name, valueOf(property, state, depth + 1)]));
    case 'array':
      return Array.from({ length: typeof schema.minItems === 'number' ? schema.minItems : 0 }, () => valueOf(schema.items, state, depth + 1));
    case 'string': {
      const text = state.sentence ?? '';
      state.sentence = undefined;
      return text;
    }
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 0;
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** The schema's type; of a list (`["string", "null"]`) the first that is not null. */
function typeOf(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null') ?? 'null';
  if (schema.type === undefined && isRecord(schema.properties)) return 'object';
  return schema.type;
}

/** A local reference (`#/$defs/Item`); any other is no schema. */
function resolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  return ref
    .slice(1)
    .split('/')
    .filter((part) => part !== '')
    .reduce<unknown>((node, part) => (isRecord(node) ? node[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined), root);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
