// What the benchmarks measure with (gateway/bench/bench.ts on podman, scripts/bench-exec-node.ts on the real node).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** /proc/<pid>/stat counts CPU time in clock ticks: 100 a second on Linux (sysconf(_SC_CLK_TCK)). */
export const CLK_TCK = 100;

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
export const median = (values: number[]) => percentile(values, 50);
export const fmt = (n: number, digits = 1) => n.toFixed(digits);
export const signed = (n: number, digits = 2) => (n >= 0 ? "+" : "") + fmt(n, digits);
/** Milliseconds since `start` (process.hrtime.bigint()). */
export const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const met = (ok: boolean) => (ok ? "met" : "MISSED");
/** "median (min to max)". */
export const spread = (values: number[], digits = 2) =>
  `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}-${fmt(Math.max(...values), digits)})`;

export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) * 1024;
}

/** CPU seconds (user + system) a process has used so far: /proc/<pid>/stat fields 14 and 15, counted after the name's last ')'. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Prints rows as columns padded to their widest cell. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? "").length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join("  ")
        .trimEnd(),
    );
}

export interface ProcessRun {
  wall: number;
  /** The command's own CPU seconds (user + system, GNU time). */
  cpu: number;
}

/** Runs a command as a whole process, stdin empty, stdout to `output`; wall time from spawn to exit, its CPU from GNU time. */
export async function timeProcess(
  command: string[],
  env: NodeJS.ProcessEnv,
  output = "/dev/null",
): Promise<ProcessRun> {
  const dir = mkdtempSync(join(tmpdir(), "entryway-bench-time-"));
  const report = join(dir, "time");
  try {
    const start = process.hrtime.bigint();
    const child = spawn(
      "/bin/sh",
      ["-c", `exec /usr/bin/time -o "$0" -f "%U %S" "$@" </dev/null >"${output}"`, report, ...command],
      { env, stdio: ["ignore", "ignore", "inherit"] },
    );
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const wall = since(start) / 1000;
    if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}`);
    return { wall, cpu: timeReport(report) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** User + system seconds from a GNU time report written with -f "%U %S". */
export function timeReport(file: string): number {
  const [user, system] = readFileSync(file, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number);
  return user! + system!;
}
