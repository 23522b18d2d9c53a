// What bench-exec-node.ts reads of the processes on the exec path: which process is which, and
// where a V8 CPU profile's time went.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fmt } from "../../testkit/gateway/measure";

/** The process whose command line starts with a program named `name` and mentions `under` (a harness folder). */
export function findProcess(name: string, under: string): number {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (path.basename(argv[0]!) === name && argv.some((a) => a.includes(under))) return Number(pid);
    } catch {
      // gone
    }
  }
  throw new Error(`no ${name} process of ${under}`);
}

/** A process's parent, from /proc/<pid>/stat. */
export const ppid = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
};

/** Self time per function of a V8 .cpuprofile, the heaviest first, with the share of the samples. */
export function profileSummary(file: string, top = 14): string[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const where = frame.url
      ? `${frame.url.replace(/^.*\/(node_modules|gateway)\//, "$1/")}:${frame.lineNumber + 1}`
      : "";
    const key = `${frame.functionName || "(anonymous)"} ${where}`.trim();
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const idle = self.get("(idle)") ?? 0;
  return [...self.entries()]
    .filter(([key]) => key !== "(idle)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => `${fmt((us / (total - idle)) * 100)}% ${key}`);
}
