/** Plain-text tables for the listing commands (ls, recordings ls, config get-contexts). */

/**
 * Rows as columns, a line each: every cell but a row's last padded to its column's widest plus `gap`
 * spaces. `trimEnd` drops the blanks an empty last cell leaves (as kubectl's get-contexts prints).
 */
export function table(
  rows: string[][],
  { gap = 2, trimEnd = false }: { gap?: number; trimEnd?: boolean } = {},
): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row.map((cell, column) => (column < row.length - 1 ? cell.padEnd(widths[column]! + gap) : cell)).join(""),
    )
    .map((line) => `${trimEnd ? line.trimEnd() : line}\n`)
    .join("");
}
