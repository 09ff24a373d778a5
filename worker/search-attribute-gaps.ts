import { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
// Not re-exported from the package root; the only public mapping from our key types to the wire enum.
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import type { temporal } from '@temporalio/proto';

type OperatorService = Pick<temporal.api.operatorservice.v1.OperatorService, 'listSearchAttributes' | 'addSearchAttributes'>;
type Key = SearchAttributeKey<SearchAttributeType>;

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

function wireType(key: Key): number {
  const wanted = encodeSearchAttributeIndexedValueType(key.type);
  if (wanted === undefined) throw new Error(`search attribute ${key.name}: unknown type ${key.type}`);
  return wanted;
}

function typeName(wire: number): string {
  const type = Object.values(SearchAttributeType).find((t) => encodeSearchAttributeIndexedValueType(t) === wire);
  return type === undefined ? `type ${wire}` : CLI_TYPE_NAMES[type];
}
