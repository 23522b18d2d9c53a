/**
 * The metric names a PromQL expression reads, for checking dashboards and alert rules against the
 * metrics that really exist. Enough of PromQL's grammar (prometheus/prometheus promql/parser) for
 * the expressions this repository writes: string literals, label matchers `{...}`, range and
 * subquery brackets `[...]`, grouping clauses `by (...)`, `without (...)`, `on (...)`,
 * `ignoring (...)`, `group_left (...)`, `group_right (...)` are dropped; of the identifiers left, a
 * name followed by `(` is a function and the keywords are operators; the rest are metric names.
 */
const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "inf",
  "nan",
]);

export function metricNames(expression: string): string[] {
  const stripped = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(match.index + match[0].length).trimStart();
    if (after.startsWith("(") || KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return [...names].sort();
}
