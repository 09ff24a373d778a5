import { SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
// A CommonJS package: its namespaces are read from the default export under ESM.
import proto, { type temporal } from '@temporalio/proto';

type OperatorService = Pick<temporal.api.operatorservice.v1.OperatorService, 'listSearchAttributes' | 'addSearchAttributes'>;
/** A typed search attribute key, as `defineSearchAttributeKey` makes them. */
export type Key = SearchAttributePair['key'];

const { IndexedValueType } = proto.temporal.api.enums.v1;

/** Our key types as the server's enum spells them. */
const WIRE_TYPES: Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType> = {
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** The `temporal` CLI spells search attribute types in PascalCase. */
export const CLI_TYPE_NAMES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

export interface SearchAttributeGaps {
  missing: Key[];
  /** Registered with another type: the server cannot change a key's type, so this needs a person. */
  wrongType: { key: Key; registered: string }[];
}

/**
 * Which of `keys` the namespace lacks or has with another type, read through the operator
 * service (the same call as `temporal operator search-attribute list`).
 */
export async function searchAttributeGaps(operator: OperatorService, namespace: string, keys: readonly Key[]): Promise<SearchAttributeGaps> {
  const { customAttributes } = await operator.listSearchAttributes({ namespace });
  const gaps: SearchAttributeGaps = { missing: [], wrongType: [] };
  for (const key of keys) {
    const registered = customAttributes?.[key.name];
    if (registered === undefined || registered === null) gaps.missing.push(key);
    else if (registered !== wireType(key)) gaps.wrongType.push({ key, registered: typeName(registered) });
  }
  return gaps;
}

/** Registers keys the namespace lacks (`temporal operator search-attribute create`). */
export async function addSearchAttributes(operator: OperatorService, namespace: string, keys: readonly Key[]): Promise<void> {
  if (keys.length === 0) return;
  await operator.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(keys.map((key) => [key.name, wireType(key)])) });
}

/** The command a person runs to register `keys`. */
export function createCommand(namespace: string, keys: readonly Key[]): string {
  const pairs = keys.map((key) => `--name ${key.name} --type ${CLI_TYPE_NAMES[key.type]}`).join(' ');
  return `temporal operator search-attribute create --namespace ${namespace} ${pairs}`;
}

function wireType(key: Key): temporal.api.enums.v1.IndexedValueType {
  return WIRE_TYPES[key.type];
}

function typeName(wire: number): string {
  const type = Object.values(SearchAttributeType).find((t) => WIRE_TYPES[t] === wire);
  return type === undefined ? `type ${wire}` : CLI_TYPE_NAMES[type];
}
