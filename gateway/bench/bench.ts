// Benchmark (not a test): prints, side by side from one run on podman,
//   1. bulk stdout throughput through the gateway vs `podman exec -t` directly (ratio),
//   2. keystroke echo latency through the gateway vs the Docker API stream directly (p50/p99, added),
//   3. gateway memory per idle session with 200 sessions open.
// The gateway runs as its own process (`entryway serve`), so its memory is measured alone.
// Run: npm run bench -w gateway   (needs podman, runc and busybox-static, like the tests)
import { spawn, execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dockerBackend } from "../src/backends/docker.js";
import { EntryClient } from "../test/helpers/client.js";
import { startPodman } from "../test/helpers/podman.js";

const BULK_MB = 64;
const KEYSTROKES = 300;
const IDLE_SESSIONS = 200;
const CONTAINER = "entryway-bench";
const rawCat = "stty raw -echo; cat";
const bulkScript = `stty raw -echo; cat /tmp/bulk`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Heap in use plus memory held outside the heap (buffers), from the gateway's own /metrics. */
async function heapAndExternalBytes(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)![1]);
  return value("entryway_nodejs_heap_size_used_bytes") + value("entryway_nodejs_external_memory_bytes");
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) * 1024;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const signed = (n: number) => (n >= 0 ? "+" : "") + fmt(n, 2);

async function main(): Promise<void> {
  const podman = await startPodman();
  const webhook = http.createServer((_req, res) => res.end(JSON.stringify({ allowed: true, user: "bench" })));
  await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
  const gatewayProcess = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("../src/cli/main.ts", import.meta.url)), "serve"], {
    env: {
      PATH: process.env.PATH,
      ENTRYWAY_HOST: "127.0.0.1",
      ENTRYWAY_PORT: "0",
      ENTRYWAY_BACKEND: "docker",
      ENTRYWAY_DOCKER_HOST: `unix://${podman.socketPath}`,
      ENTRYWAY_AUTHORIZER: "webhook",
      ENTRYWAY_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/`,
      ENTRYWAY_MAX_SESSIONS: "1000",
      ENTRYWAY_MAX_SESSIONS_PER_USER: "1000",
      // Every bench client comes from 127.0.0.1: lift the per-address limits before authentication.
      ENTRYWAY_MAX_PENDING_PER_SOURCE: "1000",
      ENTRYWAY_AUTH_ATTEMPTS_PER_MINUTE: "100000",
      ENTRYWAY_LOG_LEVEL: "info",
      ENTRYWAY_AUDIT_FILE: "/dev/null",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    let logs = "";
    gatewayProcess.stdout!.on("data", (d: Buffer) => (logs += d.toString()));
    while (!/"msg":"listening"/.test(logs)) await new Promise((r) => setTimeout(r, 100));
    const port = Number(/"port":(\d+)/.exec(logs)![1]);
    const monitoring = `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(logs)![1]}`;
    const url = (command?: string) =>
      `ws://127.0.0.1:${port}/v1/enter?container=${CONTAINER}` + (command ? `&command=/bin/sh&command=-c&command=${encodeURIComponent(command)}` : "");
    await podman.startContainer(CONTAINER);
    await podman.podman("exec", CONTAINER, "sh", "-c", `head -c ${BULK_MB * 1024 * 1024} /dev/zero | tr '\\0' 'x' > /tmp/bulk`);

    // 1. Memory per idle session, first, while the gateway process is fresh (one warm-up session before).
    const warmup = await EntryClient.connect(url(), { token: "bench", keepFrames: false });
    warmup.type("exit\n");
    await warmup.closed;
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = rssBytes(gatewayProcess.pid!);
    const heapBefore = await heapAndExternalBytes(monitoring);
    const idle: EntryClient[] = [];
    for (let i = 0; i < IDLE_SESSIONS; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => EntryClient.connect(url(), { token: "bench", keepFrames: false })));
      for (const c of batch) c.type("echo up\n");
      await Promise.all(batch.map((c) => c.waitFor(/up\r\n/, 300_000)));
      idle.push(...batch);
    }
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = rssBytes(gatewayProcess.pid!);
    const heapAfter = await heapAndExternalBytes(monitoring);
    for (const c of idle) c.type("exit\n");
    await Promise.all(idle.map((c) => c.closed));


    // 2. Throughput.
    const t0 = process.hrtime.bigint();
    const bulk = await EntryClient.connect(url(bulkScript), { token: "bench", keepFrames: false });
    await bulk.closed;
    const gatewaySeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (bulk.outputBytes !== BULK_MB * 1024 * 1024) throw new Error(`bulk: got ${bulk.outputBytes} bytes`);
    const t1 = process.hrtime.bigint();
    const direct = await promisify(execFile)("podman", ["--root", `${podman.dir}/storage`, "--runroot", `${podman.dir}/run`, "--storage-driver", "vfs", "--tmpdir", `${podman.dir}/tmp`, "exec", "-t", CONTAINER, "sh", "-c", bulkScript], {
      env: { ...process.env, CONTAINERS_CONF: `${podman.dir}/containers.conf`, XDG_RUNTIME_DIR: `${podman.dir}/xdg` },
      maxBuffer: 256 * 1024 * 1024,
      encoding: "buffer",
    });
    const directSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
    if (direct.stdout.length !== BULK_MB * 1024 * 1024) throw new Error(`direct: got ${direct.stdout.length} bytes`);

    // 3. Keystroke echo latency: one byte to `cat` in raw mode and back, through the gateway and directly.
    const viaGateway: number[] = [];
    const echo = await EntryClient.connect(url(rawCat), { token: "bench", keepFrames: false });
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < KEYSTROKES; i++) {
      const before = echo.outputBytes;
      const start = process.hrtime.bigint();
      echo.type("k");
      await echo.waitFor((c) => c.outputBytes > before);
      viaGateway.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    echo.ws.close();
    const backend = dockerBackend(`unix://${podman.socketPath}`);
    const target = await backend.resolve({ kind: "docker", container: CONTAINER });
    const viaApi: number[] = [];
    let received = 0;
    let wake: () => void = () => {};
    const exec = await backend.exec(target, ["/bin/sh", "-c", rawCat], { cols: 80, rows: 24 }, {
      onOutput: (chunk) => {
        received += chunk.length;
        wake();
      },
      onEnd: () => {},
    });
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < KEYSTROKES; i++) {
      const before = received;
      const start = process.hrtime.bigint();
      const arrived = new Promise<void>((resolve) => (wake = () => received > before && resolve()));
      exec.write(Buffer.from("k"));
      await arrived;
      viaApi.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    exec.close();

    const gatewayMBs = BULK_MB / gatewaySeconds;
    const directMBs = BULK_MB / directSeconds;
    const rows = [
      ["", "through gateway", "direct", "gateway / direct"],
      [`bulk stdout, ${BULK_MB} MiB (MiB/s)`, fmt(gatewayMBs), fmt(directMBs) + " (podman exec -t)", fmt(gatewayMBs / directMBs, 2)],
      ["keystroke echo p50 (ms)", fmt(percentile(viaGateway, 50), 2), fmt(percentile(viaApi, 50), 2) + " (Docker API stream)", `${signed(percentile(viaGateway, 50) - percentile(viaApi, 50))} ms added`],
      ["keystroke echo p99 (ms)", fmt(percentile(viaGateway, 99), 2), fmt(percentile(viaApi, 99), 2) + " (Docker API stream)", `${signed(percentile(viaGateway, 99) - percentile(viaApi, 99))} ms added`],
      [`gateway RSS, ${IDLE_SESSIONS} idle sessions`, `${fmt(rssAfter / 2 ** 20)} MiB (from ${fmt(rssBefore / 2 ** 20)})`, "", `${fmt((rssAfter - rssBefore) / IDLE_SESSIONS / 1024)} KiB per session`],
      [`gateway heap + external, ${IDLE_SESSIONS} idle`, `${fmt(heapAfter / 2 ** 20)} MiB (from ${fmt(heapBefore / 2 ** 20)})`, "", `${fmt((heapAfter - heapBefore) / IDLE_SESSIONS / 1024)} KiB per session`],
    ];
    const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
    for (const row of rows) console.log(row.map((cell, col) => cell.padEnd(widths[col]!)).join("  "));
    console.log(`(load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} CPUs)`);
  } finally {
    gatewayProcess.kill("SIGTERM");
    await new Promise((r) => gatewayProcess.once("exit", r));
    webhook.close();
    await podman.stop();
  }
}

await main();
