import type { ProviderId } from './model-ref';
import type { OutputSchema } from './structured-output';

/**
 * What each provider's structured-output mode does with a session's output schema, in one
 * line per finding, for the client to print at session start and for the adapters to
 * choose their mode by. Nothing here changes the schema: each provider is sent the schema
 * as written, and the workflow validates every answer against all of it, so a keyword a
 * provider does not enforce while the model writes is still enforced before the turn ends.
 * Pure: the workflow sandbox and the client import it.
 *
 * - OpenAI `strict: true` compiles the schema into the decoder and refuses (HTTP 400) one
 *   with an object that allows other properties or leaves a property optional, or with a
 *   keyword its subset lacks. Such a schema is sent with `strict: false`.
 * - Gemini's `responseJsonSchema` takes a subset of JSON Schema and ignores the rest.
 * - Anthropic answers through the forced `final_answer` tool, whose `input_schema` takes
 *   any JSON Schema: no findings.
 */

/** Keywords OpenAI's strict subset lacks (its structured-outputs guide). */
const OPENAI_UNSUPPORTED = [
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'minProperties',
  'maxProperties',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
  'default',
];

/** The keywords Gemini's `responseJsonSchema` reads (its structured-output guide); the rest it ignores. */
const GEMINI_SUPPORTED = new Set([
  '$schema',
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'const',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

/** Keywords whose value is a schema, a list of schemas, or a map of schemas: where the walk goes. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'];

/** How many places a line names before it says how many more there are: one line stays one line. */
const PATHS_SHOWN = 3;

interface Findings {
  /** Objects that do not say `additionalProperties: false`. */
  openObjects: string[];
  /** Properties not listed in their object's `required`. */
  optional: string[];
  /** Where each keyword appears, by keyword, in the order first seen. */
  keywords: Map<string, string[]>;
}

/** One line per thing the provider's mode refuses or ignores in this schema, with what the adapter does about it; none when it takes it whole. */
export function outputSchemaNotes(provider: ProviderId, schema: OutputSchema): string[] {
  const found = findings(schema);
  switch (provider) {
    case 'openai':
      return openAiNotes(found);
    case 'google':
      return geminiNotes(found);
    case 'anthropic':
      return [];
  }
}

/** OpenAI's `strict: true` takes the schema: every object closed, every property required, no keyword outside its subset. */
export function openAiStrictCompatible(schema: OutputSchema): boolean {
  return openAiNotes(findings(schema)).length === 0;
}

const NON_STRICT = 'sent non-strict, the workflow still validates';

function openAiNotes(found: Findings): string[] {
  const lines: string[] = [];
  if (found.openObjects.length > 0) lines.push(`openai strict mode needs "additionalProperties": false on every object (${places(found.openObjects)}): ${NON_STRICT}`);
  if (found.optional.length > 0) lines.push(`openai strict mode needs every property in "required" (optional: ${places(found.optional)}): ${NON_STRICT}`);
  const refused = OPENAI_UNSUPPORTED.filter((k) => found.keywords.has(k));
  if (refused.length > 0) lines.push(`openai strict mode refuses ${refused.join(', ')} (${places(refused.flatMap((k) => found.keywords.get(k) ?? []))}): ${NON_STRICT}`);
  return lines;
}

function geminiNotes(found: Findings): string[] {
  const ignored = [...found.keywords.keys()].filter((k) => !GEMINI_SUPPORTED.has(k));
  if (ignored.length === 0) return [];
  const at = ignored.flatMap((k) => found.keywords.get(k) ?? []);
  return [`gemini's response schema ignores ${ignored.join(', ')} (${places(at)}): not enforced while the model writes, the workflow still validates`];
}

function places(paths: string[]): string {
  const shown = paths.slice(0, PATHS_SHOWN).join(', ');
  return paths.length > PATHS_SHOWN ? `${shown} and ${paths.length - PATHS_SHOWN} more` : shown;
}

function findings(schema: OutputSchema): Findings {
  const found: Findings = { openObjects: [], optional: [], keywords: new Map() };
  walk(schema, '', found);
  return found;
}

/** Every subschema, by its JSON Pointer from the root (`/` for the root itself). */
function walk(node: unknown, path: string, found: Findings): void {
  if (!isRecord(node)) return;
  const here = path === '' ? '/' : path;
  for (const key of Object.keys(node)) {
    const seen = found.keywords.get(key);
    if (seen) seen.push(here);
    else found.keywords.set(key, [here]);
  }
  if (isObjectSchema(node)) {
    if (node.additionalProperties !== false) found.openObjects.push(here);
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    for (const name of Object.keys(isRecord(node.properties) ? node.properties : {})) {
      if (!required.has(name)) found.optional.push(`${path}/properties/${name}`);
    }
  }
  for (const key of ONE_SCHEMA) walk(node[key], `${path}/${key}`, found);
  for (const key of SCHEMA_LISTS) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((item, i) => walk(item, `${path}/${key}/${i}`, found));
  }
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (isRecord(map)) for (const [name, item] of Object.entries(map)) walk(item, `${path}/${key}/${name}`, found);
  }
}

function isObjectSchema(node: Record<string, unknown>): boolean {
  return node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || isRecord(node.properties);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
