// The report of bench-exec-node.ts part 2: `entryway enter` through the gateway pod against
// `kubectl exec`, bulk streams (wall time, CPU per MiB of every process on the path), keystroke
// echo and the first prompt byte, each against its target; then the gateway's CPU profile.
import { cpus } from "node:os";
import { fmt, median, met, percentile, printTable, signed, spread } from "../../testkit/gateway/measure";
import { profileSummary } from "./exec-path-processes";

/** The processes on the exec path whose CPU each bulk round measures. */
export const PATH_PROCESSES = ["gateway", "API server", "kubelet", "target's shim"] as const;
export type PathProcess = (typeof PATH_PROCESSES)[number];

/** One client's rounds of a bulk stream: wall and CPU seconds of the client, CPU seconds of each process on the path. */
export interface Side {
  wall: number[];
  cpu: number[];
  path: Record<PathProcess, number[]>;
}

export interface PathFigures {
  /** Each bulk mode's rounds through the gateway (`via`) and with kubectl (`direct`). */
  readonly bulk: readonly { mode: string; via: Side; direct: Side }[];
  /** Keystroke echo and first prompt byte (ms) of each client. */
  readonly echoes: { gateway: number[]; kubectl: number[] };
  readonly prompt: { gateway: number[]; kubectl: number[] };
  /** The load average before and after the rounds. */
  readonly load: { start: string; end: string };
  /** The profiled gateway's CPU seconds per bulk mode, and its .cpuprofile file. */
  readonly profiledCpu: Record<string, number>;
  readonly profile: string | undefined;
  readonly sizes: { pairs: number; bulkMiB: number; promptRounds: number };
}

export function printPathReport({ bulk, echoes, prompt, load, profiledCpu, profile, sizes }: PathFigures): void {
  const { pairs, bulkMiB, promptRounds } = sizes;
  const rows: string[][] = [["", "entryway enter via the gateway pod", "kubectl exec", "ratio", "target"]];
  const perMiB = (seconds: number[]) => (median(seconds) / bulkMiB) * 1000;
  for (const b of bulk) {
    const ratios = b.via.wall.map((wall, pair) => b.direct.wall[pair]! / wall);
    const ratio = median(ratios);
    rows.push([
      `bulk ${b.mode} ${bulkMiB} MiB: s, median of ${pairs} (min-max)`,
      `${spread(b.via.wall)} = ${fmt(bulkMiB / median(b.via.wall))} MiB/s`,
      `${spread(b.direct.wall)} = ${fmt(bulkMiB / median(b.direct.wall))} MiB/s`,
      `${fmt(ratio, 2)}x kubectl's throughput (pairs ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})`,
      `>= 0.9x: ${met(ratio >= 0.9)}${ratio < 0.9 ? `, short by ${fmt((0.9 - ratio) * 100, 0)} points` : ""}`,
    ]);
    rows.push([
      "  CPU ms/MiB: client process",
      fmt(perMiB(b.via.cpu), 2),
      fmt(perMiB(b.direct.cpu), 2),
      `${fmt(median(b.via.cpu) / median(b.direct.cpu), 2)}x`,
      "",
    ]);
    for (const k of PATH_PROCESSES) {
      if (k === "gateway") continue;
      rows.push([
        `  CPU ms/MiB: ${k}`,
        fmt(perMiB(b.via.path[k]), 2),
        fmt(perMiB(b.direct.path[k]), 2),
        `${fmt(median(b.via.path[k]) / median(b.direct.path[k]), 2)}x`,
        "",
      ]);
    }
    const gatewayVsApi = median(b.via.path.gateway) / median(b.via.path["API server"]);
    rows.push([
      "  CPU ms/MiB: gateway pod",
      fmt(perMiB(b.via.path.gateway), 2),
      `API server, same stream: ${fmt(perMiB(b.via.path["API server"]), 2)}`,
      `${fmt(gatewayVsApi, 2)}x the API server's`,
      `<= API server's: ${met(gatewayVsApi <= 1)}${gatewayVsApi > 1 ? `, over by ${fmt((gatewayVsApi - 1) * 100, 0)} %` : ""}`,
    ]);
    const sum = (s: Side) => median(s.cpu) + Object.values(s.path).reduce((t, v) => t + median(v), 0);
    rows.push([
      "  CPU s of the whole path (medians summed)",
      fmt(sum(b.via), 2),
      fmt(sum(b.direct), 2),
      `${fmt(sum(b.via) / sum(b.direct), 2)}x`,
      "",
    ]);
  }
  for (const p of [50, 99]) {
    const added = percentile(echoes.gateway, p) - percentile(echoes.kubectl, p);
    const limit = p === 50 ? 0.5 : 2;
    rows.push([
      `keystroke echo p${p}, ${echoes.gateway.length} keys (ms)`,
      fmt(percentile(echoes.gateway, p), 2),
      fmt(percentile(echoes.kubectl, p), 2),
      `${signed(added)} ms`,
      `<= +${limit} ms: ${met(added <= limit)}${added > limit ? `, over by ${fmt(added - limit, 2)} ms` : ""}`,
    ]);
  }
  const promptAdded = median(prompt.gateway) - median(prompt.kubectl);
  rows.push([
    `first prompt byte, median of ${promptRounds} (ms)`,
    spread(prompt.gateway, 0),
    spread(prompt.kubectl, 0),
    `${signed(promptAdded, 0)} ms`,
    `<= +100 ms: ${met(promptAdded <= 100)}${promptAdded > 100 ? `, over by ${fmt(promptAdded - 100, 0)} ms` : ""}`,
  ]);
  printTable(rows);
  for (const b of bulk)
    console.log(
      `bulk ${b.mode} rounds (s): gateway ${b.via.wall.map((v) => fmt(v, 2)).join(" ")}; kubectl ${b.direct.wall.map((v) => fmt(v, 2)).join(" ")}`,
    );
  console.log(`load average ${load.start} before the rounds, ${load.end} after, on ${cpus().length} CPUs (shared)`);
  console.log(
    `gateway under node --cpu-prof (a process here, same build and API server): CPU ms/MiB ${Object.entries(profiledCpu)
      .map(([mode, s]) => `${mode} ${fmt((s / bulkMiB) * 1000, 2)}`)
      .join(", ")}; self time, heaviest first:`,
  );
  if (profile) for (const line of profileSummary(profile)) console.log(`  ${line}`);
}
