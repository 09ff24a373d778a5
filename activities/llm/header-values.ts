/**
 * Response headers as undici's `request` returns them (lower-cased keys, repeated
 * headers as arrays) or as a WHATWG `Headers` (fetch, MockAgent, tests).
 */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** Every value of header `name` (case-insensitive), trimmed, empty ones dropped. */
export function headerValues(headers: HeaderSource | undefined, name: string): string[] {
  if (!headers) return [];
  const wanted = name.toLowerCase();
  const raw: (string | string[] | undefined | null)[] = [];
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).forEach === 'function') {
    raw.push((headers as Headers).get(wanted));
  } else {
    for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (key.toLowerCase() === wanted) raw.push(value);
    }
  }
  return raw
    .flat()
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  return headerValues(headers, name)[0];
}
