/**
 * The model's arguments checked against the JSON Schema a server lists for its tool, by the
 * worker before it calls the server. The schema comes from outside and may be hostile, so
 * the check is bounded: it counts its steps and its depth and gives up past either, and it
 * never runs a regex the server wrote (`pattern`, `patternProperties`, `format` are left to
 * the server, which has to check its arguments anyway). Every outcome, also giving up, is
 * an ordinary result: arguments that pass, or the error result the model reads, in the
 * words of the built-in tools' refusals (contracts/tools/validate-tool-input.ts).
 */

/** Schema-and-value visits one check may make: a few milliseconds, whatever the schema. */
const MAX_STEPS = 250_000;
/** How deep schema and arguments may nest together, `$ref`s included. */
const MAX_DEPTH = 128;
/** Lines of a refusal: enough to fix the call, bounded in history. */
const MAX_ISSUES = 20;
/** `enum` values quoted in a refusal, and the characters of each: a schema's or the model's values can be huge. */
const QUOTED_VALUES = 10;
const QUOTED_CHARS = 60;

export type ArgumentCheck = { ok: true } | { ok: false; content: string };

type Path = (string | number)[];
interface Issue {
  path: Path;
  message: string;
}
type Schema = Record<string, unknown>;

/** Why a schema cannot be checked: it is the server's mistake, not the model's. */
class Unbounded extends Error {}

export function checkMcpArguments(server: string, offeredName: string, schema: unknown, args: unknown): ArgumentCheck {
  let issues: Issue[];
  try {
    issues = new Checker(schema).check(schema, args, [], 0);
  } catch (error) {
    const why = error instanceof Unbounded ? error.message : 'checking it failed';
    return {
      ok: false,
      content:
        `Tool call rejected: the input schema MCP server "${server}" lists for "${offeredName}" cannot be checked (${why}), so the call was not sent. ` +
        'Do not call this tool again; tell the user its server lists a schema the worker cannot check.',
    };
  }
  if (issues.length === 0) return { ok: true };
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => `- ${formatPath(issue.path)}: ${issue.message}`);
  if (issues.length > MAX_ISSUES) lines.push(`- … and ${issues.length - MAX_ISSUES} more`);
  return { ok: false, content: [`Tool call rejected: invalid arguments for "${offeredName}":`, ...lines, 'Fix the arguments and call the tool again.'].join('\n') };
}

class Checker {
  readonly #root: unknown;
  #steps = 0;

  constructor(root: unknown) {
    this.#root = root;
  }

  check(schema: unknown, value: unknown, path: Path, depth: number): Issue[] {
    this.#step(depth);
    if (schema === false) return [{ path, message: 'is not allowed here' }];
    if (!isObject(schema)) return [];
    const issues: Issue[] = [];
    if (typeof schema.$ref === 'string') {
      const target = this.#resolve(schema.$ref);
      if (target !== undefined) issues.push(...this.check(target, value, path, depth + 1));
    }
    const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === 'string') : [];
    if (types.length > 0 && !types.some((t) => hasType(value, t))) return [...issues, { path, message: `expected ${types.join(' or ')}, received ${kindOf(value)}` }];
    if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => this.#equal(allowed, value, depth))) {
      const quoted = schema.enum.slice(0, QUOTED_VALUES).map(quote).join(', ');
      issues.push({ path, message: `must be one of ${quoted}${schema.enum.length > QUOTED_VALUES ? ', …' : ''}` });
    }
    if ('const' in schema && !this.#equal(schema.const, value, depth)) issues.push({ path, message: `must be ${quote(schema.const)}` });
    if (typeof value === 'string') issues.push(...stringIssues(schema, value, path));
    if (typeof value === 'number') issues.push(...numberIssues(schema, value, path));
    if (Array.isArray(value)) issues.push(...this.#arrayIssues(schema, value, path, depth));
    else if (isObject(value)) issues.push(...this.#objectIssues(schema, value, path, depth));
    issues.push(...this.#combinationIssues(schema, value, path, depth));
    return issues;
  }

  #step(depth: number): void {
    if (depth > MAX_DEPTH) throw new Unbounded(`it nests or refers to itself more than ${MAX_DEPTH} levels deep`);
    if (++this.#steps > MAX_STEPS) throw new Unbounded(`it takes more than ${MAX_STEPS} steps`);
  }

  /** A `$ref` into the schema itself (`#`, `#/$defs/x`); any other is the server's to follow. */
  #resolve(ref: string): unknown {
    if (ref !== '#' && !ref.startsWith('#/')) return undefined;
    let target: unknown = this.#root;
    for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (!isObject(target) && !Array.isArray(target)) return undefined;
      target = Object.hasOwn(target, key) ? (target as Record<string, unknown>)[key] : undefined;
    }
    return target;
  }

  #objectIssues(schema: Schema, value: Record<string, unknown>, path: Path, depth: number): Issue[] {
    const issues: Issue[] = [];
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) if (typeof name === 'string' && !Object.hasOwn(value, name)) issues.push({ path: [...path, name], message: 'is required' });
    }
    const unknown: string[] = [];
    for (const key of Object.keys(value)) {
      this.#step(depth);
      if (Object.hasOwn(properties, key)) issues.push(...this.check(properties[key], value[key], [...path, key], depth + 1));
      // A key a `patternProperties` regex may name is the server's to judge.
      else if (schema.patternProperties !== undefined) continue;
      else if (schema.additionalProperties === false) unknown.push(key);
      else if (isObject(schema.additionalProperties)) issues.push(...this.check(schema.additionalProperties, value[key], [...path, key], depth + 1));
    }
    if (unknown.length > 0) {
      const named = unknown.slice(0, QUOTED_VALUES).map(quote).join(', ');
      issues.push({ path, message: `unknown field${unknown.length > 1 ? 's' : ''} ${named}${unknown.length > QUOTED_VALUES ? ', …' : ''}` });
    }
    const count = Object.keys(value).length;
    if (typeof schema.minProperties === 'number' && count < schema.minProperties) issues.push({ path, message: `needs at least ${schema.minProperties} fields` });
    if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) issues.push({ path, message: `takes at most ${schema.maxProperties} fields` });
    return issues;
  }

  #arrayIssues(schema: Schema, value: unknown[], path: Path, depth: number): Issue[] {
    const issues: Issue[] = [];
    // `prefixItems` (2020-12) or an array of `items` (draft 7) for the first elements, then `items` (or `additionalItems`) for the rest.
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    value.forEach((element, i) => {
      const item = i < prefix.length ? prefix[i] : rest;
      if (item !== undefined) issues.push(...this.check(item, element, [...path, i], depth + 1));
    });
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) issues.push({ path, message: `needs at least ${schema.minItems} items` });
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) issues.push({ path, message: `takes at most ${schema.maxItems} items` });
    return issues;
  }

  #combinationIssues(schema: Schema, value: unknown, path: Path, depth: number): Issue[] {
    const issues: Issue[] = [];
    const branches = (key: string) => (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : []);
    for (const branch of branches('allOf')) issues.push(...this.check(branch, value, path, depth + 1));
    const anyOf = branches('anyOf');
    if (anyOf.length > 0 && !anyOf.some((branch) => this.check(branch, value, path, depth + 1).length === 0)) issues.push({ path, message: 'does not match any of the shapes the schema allows' });
    const oneOf = branches('oneOf');
    if (oneOf.length > 0) {
      const matching = oneOf.filter((branch) => this.check(branch, value, path, depth + 1).length === 0).length;
      if (matching === 0) issues.push({ path, message: 'does not match any of the shapes the schema allows' });
      if (matching > 1) issues.push({ path, message: 'matches more than one of the shapes the schema allows, and must match exactly one' });
    }
    if (schema.not !== undefined && this.check(schema.not, value, path, depth + 1).length === 0) issues.push({ path, message: 'has a shape the schema does not allow' });
    return issues;
  }

  #equal(a: unknown, b: unknown, depth: number): boolean {
    this.#step(depth);
    if (a === b) return true;
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => this.#equal(x, b[i], depth + 1));
    if (isObject(a) && isObject(b)) {
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && this.#equal(a[k], b[k], depth + 1));
    }
    return false;
  }
}

function stringIssues(schema: Schema, value: string, path: Path): Issue[] {
  const issues: Issue[] = [];
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) issues.push({ path, message: `too short: at least ${schema.minLength} characters` });
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) issues.push({ path, message: `too long: at most ${schema.maxLength} characters` });
  return issues;
}

function numberIssues(schema: Schema, value: number, path: Path): Issue[] {
  const issues: Issue[] = [];
  const at = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const [min, max, above, below, step] = [at('minimum'), at('maximum'), at('exclusiveMinimum'), at('exclusiveMaximum'), at('multipleOf')];
  if (min !== undefined && value < min) issues.push({ path, message: `too small: at least ${min}` });
  if (max !== undefined && value > max) issues.push({ path, message: `too big: at most ${max}` });
  if (above !== undefined && value <= above) issues.push({ path, message: `too small: more than ${above}` });
  if (below !== undefined && value >= below) issues.push({ path, message: `too big: less than ${below}` });
  if (step !== undefined && step > 0 && !Number.isInteger(value / step)) issues.push({ path, message: `must be a multiple of ${step}` });
  return issues;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Quotes of a schema's objects, made once: one `enum` or `const` can be quoted for each of thousands of elements. */
const quotes = new WeakMap<object, string>();

function quote(value: unknown): string {
  if (typeof value === 'string') return value.length > QUOTED_CHARS ? `${JSON.stringify(value.slice(0, QUOTED_CHARS))}…` : JSON.stringify(value);
  if (typeof value !== 'object' || value === null) return String(value);
  let quoted = quotes.get(value);
  if (quoted === undefined) {
    const json = JSON.stringify(value);
    quoted = json.length > QUOTED_CHARS ? `${json.slice(0, QUOTED_CHARS)}…` : json;
    quotes.set(value, quoted);
  }
  return quoted;
}

function formatPath(path: Path): string {
  if (path.length === 0) return 'arguments';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${quote(segment)}]`;
  }
  // The end of a deep path says where; its start is the same few fields every time.
  return out.length > QUOTED_CHARS * 4 ? `…${out.slice(-QUOTED_CHARS * 4)}` : out;
}
