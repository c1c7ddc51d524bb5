import type { ResultTable } from '../warehouse/duckdb.ts';

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

const cellText = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/**
 * A result as an aligned text table: a header, a rule, one line per row; numbers right-aligned,
 * text left-aligned, NULL as an empty cell. Columns are as wide as their widest cell.
 */
export function formatTable(result: ResultTable): string {
  const cells = result.rows.map((row) => row.map(cellText));
  const numeric = result.columns.map(
    (_, column) => cells.length > 0 && cells.every((row) => row[column] === '' || NUMBER.test(row[column]!)),
  );
  const widths = result.columns.map((name, column) =>
    Math.max(name.length, ...cells.map((row) => row[column]!.length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, column) => (numeric[column] ? value.padStart(widths[column]!) : value.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return (
    [line(result.columns), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n') + '\n'
  );
}

/** A titled section of the demo's output. */
export function section(title: string, body: string): string {
  return `\n== ${title}\n${body.endsWith('\n') ? body : `${body}\n`}`;
}
