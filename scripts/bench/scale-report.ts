// bench-scale.ts's figures: one table of wall time, CPU time and peak RSS with the ratios beside
// them, and what each kind of engine step took.
import type { EngineResult } from "../../testkit/harness/pulumi-engine";
import type { Measurement } from "./process-tree";

export interface Row {
  label: string;
  m: Measurement;
  objects?: number;
  note?: string;
}

/**
 * What each kind of step took in one engine run (EngineResult.stepSeconds): per provider resource
 * type, the steps, their median, mean and longest, and their sum, the time they held one of the
 * engine's `--parallel` slots; sorted by that sum. With the slots always busy, the update's wall
 * time is about the sum over all types divided by `--parallel`.
 */
export function stepTimes(result: EngineResult, parallel: number): string {
  const rows = Object.entries(result.stepSeconds ?? {})
    // The stack and our components hold no slot: their outputs wait for their children's.
    .filter(([type]) => type !== "pulumi:pulumi:Stack" && !type.startsWith("entryway:"))
    .map(([type, seconds]) => {
      const sorted = [...seconds].sort((a, b) => a - b);
      const sum = sorted.reduce((a, b) => a + b, 0);
      return {
        type,
        n: sorted.length,
        median: sorted[Math.floor(sorted.length / 2)]!,
        mean: sum / sorted.length,
        max: sorted.at(-1)!,
        sum,
      };
    })
    .sort((a, b) => b.sum - a.sum);
  const total = rows.reduce((sum, r) => sum + r.sum, 0);
  return rows
    .slice(0, 8)
    .map(
      (r) =>
        `  ${r.type}: ${r.n} steps, median ${r.median.toFixed(1)} s, mean ${r.mean.toFixed(1)} s, max ${r.max.toFixed(1)} s, sum ${r.sum.toFixed(0)} s`,
    )
    .concat(
      `  all ${rows.length} provider types: sum ${total.toFixed(0)} s, / --parallel ${parallel} = ${(total / parallel).toFixed(0)} s`,
    )
    .join("\n");
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

export function table(rows: Row[], baseline: (row: Row) => Row | undefined): string {
  const header = ["", "objects", "wall", "CPU", "peak RSS", "procs", "wall vs", "CPU vs", "RSS vs", "note"];
  const lines = rows.map((row) => {
    const base = baseline(row);
    const ratio = (key: "wallSeconds" | "cpuSeconds" | "peakRssBytes") =>
      base && base !== row ? `${(row.m[key] / base.m[key]).toFixed(1)}x` : "";
    return [
      row.label,
      row.objects === undefined ? "" : String(row.objects),
      `${row.m.wallSeconds.toFixed(1)} s`,
      `${row.m.cpuSeconds.toFixed(1)} s`,
      mib(row.m.peakRssBytes),
      String(row.m.processes),
      ratio("wallSeconds"),
      ratio("cpuSeconds"),
      ratio("peakRssBytes"),
      row.note ?? "",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [format(header), ...lines.map(format)].join("\n");
}
