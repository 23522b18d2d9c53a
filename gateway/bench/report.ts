// The benchmark's report (gateway/bench/bench.ts): one table, each figure next to its target, then every round.
import { cpus, loadavg } from "node:os";
import { fmt, median, met, percentile, printTable, signed, spread } from "../../testkit/gateway/measure.js";
import {
  BULK_MIB,
  IDLE_BATCH,
  IDLE_SESSIONS,
  IN_PROCESS_MIB,
  IN_PROCESS_ROUNDS,
  KEYSTROKES,
  PROMPT_ROUNDS,
  REPLICA_BYTES,
  type Gateway,
  type Results,
} from "./scenarios.js";

/** The report: one table, each figure next to its target, then every round. */
export function report(
  gateways: Gateway[],
  pairs: number,
  { memory, prompt: { promptGateway, promptDirect, setupSteps }, bulk, echo, inProcess, loadBefore }: Results,
): void {
  const { viaGateways, viaApi } = echo;
  const viaGateway = viaGateways[0]!;
  const relay = inProcess.relayed;
  const { rssBefore, rssAfter, heapBefore, heapAfter } = memory[0]!;
  const rssPerSession = (rssAfter - rssBefore) / IDLE_SESSIONS;
  const heapPerSession = (heapAfter - heapBefore) / IDLE_SESSIONS;
  const sessionsIn512 = Math.floor((REPLICA_BYTES - rssBefore) / rssPerSession);
  const rows: string[][] = [["", "through the gateway", "direct", "gateway vs direct", "target"]];
  for (const { mode, through, direct } of bulk) {
    const directSpeed = BULK_MIB / median(direct.wall);
    for (const [i, gateway] of gateways.entries()) {
      const runs = through[i]!;
      // Pair by pair: each gateway round against the direct round of the same pair.
      const ratios = runs.wall.map((wall, pair) => direct.wall[pair]! / wall);
      const label = gateways.length > 1 ? `, ${gateway.name}` : "";
      rows.push([
        `bulk ${mode.name} ${BULK_MIB} MiB, real CLI${label}: s, median of ${pairs} (min-max)`,
        spread(runs.wall),
        `${spread(direct.wall)} (${mode.direct})`,
        `${fmt(median(ratios), 2)}x (pairs ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})`,
        i === 0 ? `>= ${fmt(mode.target, 1)}x: ${met(median(ratios) >= mode.target)}` : "",
      ]);
      const perMiB = (seconds: number[]) => (median(seconds) / BULK_MIB) * 1000;
      rows.push([
        `  CPU ms per MiB: gateway, podman service${label}`,
        `${fmt(perMiB(runs.gatewayCpu), 2)} gateway; ${fmt(perMiB(runs.serviceCpu), 2)} podman service`,
        "(podman exec reads conmon itself)",
        `gateway ${fmt(median(runs.gatewayCpu) / median(runs.serviceCpu), 2)}x the service's`,
        i === 0 ? `gateway <= service: ${met(median(runs.gatewayCpu) <= median(runs.serviceCpu))}` : "",
      ]);
      rows.push([
        `  CPU s of the client process${label}`,
        `${spread(runs.cpu)} (entryway enter)`,
        `${spread(direct.cpu)} (podman exec)`,
        "",
        "",
      ]);
      const pathCpu = median(runs.cpu) + median(runs.gatewayCpu) + median(runs.serviceCpu);
      rows.push([
        `  CPU s of the whole path but conmon${label}`,
        `${fmt(pathCpu, 2)} (client + gateway + podman service)`,
        `${fmt(median(direct.cpu), 2)} (podman exec)`,
        `${fmt(pathCpu / median(direct.cpu), 2)}x`,
        "",
      ]);
    }
    rows.push([
      `  ${mode.name} MiB/s, medians`,
      gateways
        .map(
          (g, i) =>
            `${fmt(BULK_MIB / median(through[i]!.wall))}${gateways.length > 1 ? ` (${g.name.split(" ")[0]})` : ""}`,
        )
        .join(", "),
      fmt(directSpeed),
      "",
      "",
    ]);
  }
  const echoAdded = (p: number) => percentile(viaGateway, p) - percentile(viaApi, p);
  const promptAdded = median(promptGateway) - median(promptDirect);
  const inGateway = median(inProcess.gateway);
  const inDirect = median(inProcess.direct);
  const relayMBs = inProcess.relay.length > 0 ? median(inProcess.relay) : NaN;
  rows.push(
    [
      `keystroke echo p50, ${KEYSTROKES} keys (ms)`,
      fmt(percentile(viaGateway, 50), 2),
      `${fmt(percentile(viaApi, 50), 2)} (Docker API stream)`,
      `${signed(echoAdded(50))} ms`,
      `< +0.2 ms: ${met(echoAdded(50) < 0.2)}`,
    ],
    [
      `keystroke echo p99, ${KEYSTROKES} keys (ms)`,
      fmt(percentile(viaGateway, 99), 2),
      `${fmt(percentile(viaApi, 99), 2)} (Docker API stream)`,
      `${signed(echoAdded(99))} ms`,
      `< +1 ms: ${met(echoAdded(99) < 1)}`,
    ],
    ...gateways.slice(1).map((gateway, i) => {
      const added = (p: number) => percentile(viaGateways[i + 1]!, p) - percentile(viaApi, p);
      return [
        `  the same, ${gateway.name}: p50, p99 (ms)`,
        `${fmt(percentile(viaGateways[i + 1]!, 50), 2)}, ${fmt(percentile(viaGateways[i + 1]!, 99), 2)}`,
        "",
        `${signed(added(50))}, ${signed(added(99))} ms`,
        "",
      ];
    }),
    [
      `gateway RSS, ${IDLE_SESSIONS} idle sessions`,
      `${fmt(rssAfter / 2 ** 20)} MiB (from ${fmt(rssBefore / 2 ** 20)})`,
      "",
      `${fmt(rssPerSession / 1024)} KiB per session`,
      `<= 100 KiB: ${met(rssPerSession <= 100 * 1024)}`,
    ],
    [
      `gateway heap + external, ${IDLE_SESSIONS} idle`,
      `${fmt(heapAfter / 2 ** 20)} MiB (from ${fmt(heapBefore / 2 ** 20)})`,
      "",
      `${fmt(heapPerSession / 1024)} KiB per session`,
      "",
    ],
    ...gateways.slice(1).map((gateway, i) => {
      const m = memory[i + 1]!;
      return [
        `  the same, ${gateway.name}: RSS, heap + external`,
        `${fmt(m.rssAfter / 2 ** 20)} MiB (from ${fmt(m.rssBefore / 2 ** 20)})`,
        "",
        `${fmt((m.rssAfter - m.rssBefore) / IDLE_SESSIONS / 1024)}, ${fmt((m.heapAfter - m.heapBefore) / IDLE_SESSIONS / 1024)} KiB per session`,
        "",
      ];
    }),
    ["idle sessions in a 512 MiB replica", `${sessionsIn512} (extrapolated)`, "", "", ""],
    [
      `connect to first prompt byte, median of ${PROMPT_ROUNDS} (ms)`,
      fmt(median(promptGateway)),
      `${fmt(median(promptDirect))} (podman exec -it)`,
      `${signed(promptAdded, 1)} ms`,
      `< +50 ms: ${met(promptAdded < 50)}`,
    ],
    [
      `in-process bulk, ${IN_PROCESS_MIB} MiB, median of ${IN_PROCESS_ROUNDS} (MiB/s)`,
      fmt(inGateway),
      `${fmt(inDirect)} (podman exec -t into this process)`,
      `${fmt(inGateway / inDirect, 2)}x`,
      "",
    ],
    [
      "  the same through websocketd (MiB/s)",
      "",
      relay ? `${fmt(relayMBs)} (websocketd + podman exec -t)` : "skipped: no websocketd",
      relay ? `${fmt(inGateway / relayMBs, 2)}x` : "",
      "",
    ],
  );
  printTable(rows);
  console.log(
    `gateway setup per session, mean over the ${PROMPT_ROUNDS} prompt rounds (ms): ` +
      setupSteps.map(({ step, ms }) => `${step} ${fmt(ms)}`).join(", "),
  );
  for (const { mode, through, direct } of bulk) {
    console.log(
      `bulk ${mode.name} rounds (s): ` +
        [
          ...gateways.map((g, i) => `${g.name} ${through[i]!.wall.map((v) => fmt(v, 2)).join(" ")}`),
          `${mode.direct} ${direct.wall.map((v) => fmt(v, 2)).join(" ")}`,
        ].join("; "),
    );
  }
  console.log(
    `in-process rounds (MiB/s): gateway ${inProcess.gateway.map((v) => fmt(v)).join(" ")}; podman exec -t ${inProcess.direct.map((v) => fmt(v)).join(" ")}` +
      (relay ? `; websocketd ${inProcess.relay.map((v) => fmt(v)).join(" ")}` : ""),
  );
  console.log(
    `prompt rounds (ms): gateway ${promptGateway.map((v) => fmt(v, 0)).join(" ")}; podman exec -it ${promptDirect.map((v) => fmt(v, 0)).join(" ")}`,
  );
  console.log(
    `${IDLE_SESSIONS} idle sessions opened in ${memory.map((m) => `${fmt(m.openingSeconds)} s`).join(" and ")}, ${IDLE_BATCH} at a time`,
  );
  console.log(
    `idle sessions in 512 MiB = (512 MiB - ${fmt(rssBefore / 2 ** 20)} MiB at start) / ${fmt(rssPerSession / 1024)} KiB, extrapolated from the ${IDLE_SESSIONS}-session figure`,
  );
  console.log(
    `CPU of conmon (the terminal's reader, on both paths) is in neither column. Load average ${loadBefore.map((l) => l.toFixed(1)).join(" ")} at the start, ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} at the end, on ${cpus().length} CPUs`,
  );
}
