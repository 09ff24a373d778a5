/**
 * Everything a value holds, as text a test can search: strings as they are and, when they
 * look like base64 (how history JSON carries payload bytes), decoded as well; byte arrays
 * (how protos carry them) decoded as UTF-8. Without this, a secret inside a payload would
 * hide from `JSON.stringify(history).includes(secret)` behind its base64 encoding.
 */
export function searchableText(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      parts.push(v);
      if (v.length >= 4 && v.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(v)) parts.push(Buffer.from(v, 'base64').toString('utf8'));
      return;
    }
    if (v instanceof Uint8Array) {
      parts.push(Buffer.from(v).toString('utf8'));
      return;
    }
    if (typeof v !== 'object' || v === null || seen.has(v)) {
      if (v !== undefined && v !== null && typeof v !== 'object') parts.push(String(v));
      return;
    }
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, item] of v) {
        visit(k);
        visit(item);
      }
      return;
    }
    for (const [k, item] of Object.entries(v)) {
      parts.push(k);
      visit(item);
    }
  };
  visit(value);
  return parts.join('\n');
}
