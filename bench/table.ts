/** A plain-text table: a header row, a rule, and columns padded to their widest cell; numbers align right. */
export function table(headers: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  const cells = rows.map((row) => row.map(cell));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number' || r[i] === null || r[i] === undefined));
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return '–';
  return String(value);
}
