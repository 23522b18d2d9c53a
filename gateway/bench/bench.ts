// Benchmark (not a test): prints, side by side from one run on podman, each figure next to its target:
//   1. gateway memory per idle session with 500 sessions open, and how many idle sessions fit in 512 MiB;
//   2. time from connect to the first prompt byte, against `podman exec -it`, and where the gateway's
//      setup time goes (its entryway_session_setup_seconds histogram: authorize, resolve, exec, wrapper, resize);
//   3. bulk stdout throughput through the gateway, against `podman exec -t` directly and against
//      websocketd (a generic WebSocket relay, Debian package `websocketd`) relaying that same `podman exec -t`;
//   4. keystroke echo latency through the gateway against the Docker API stream directly (p50/p99, added).
// Rounds alternate between the paths so that a drift of the (shared) machine hits all of them alike;
// medians are printed. The gateway runs as its own process (`entryway serve`), so its memory is its own.
// Run: npm run bench -w gateway   (needs podman, runc and busybox-static, like the tests; websocketd
// for the relay comparison: apt-get install websocketd, else that row says it was skipped)
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pty from "node-pty";
import WebSocket from "ws";
import { dockerBackend } from "../src/backends/docker.js";
import { EntryClient } from "../test/helpers/client.js";
import { startPodman, type Podman } from "../test/helpers/podman.js";

const BULK_MB = 64;
const BULK_ROUNDS = 3;
const KEYSTROKES = 500;
const PROMPT_ROUNDS = 10;
const IDLE_SESSIONS = 500;
const IDLE_BATCH = 25;
const REPLICA_BYTES = 512 * 2 ** 20;
const CONTAINER = "entryway-bench";
const rawCat = "stty raw -echo; cat";
const bulkScript = `stty raw -echo; cat /tmp/bulk`;
const run = promisify(execFile);

const median = (values: number[]) => percentile(values, 50);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const signed = (n: number, digits = 2) => (n >= 0 ? "+" : "") + fmt(n, digits);
const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6; // ms
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const met = (ok: boolean) => (ok ? "met" : "MISSED");

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) * 1024;
}

/** The podman CLI against the bench's private store, as argv and environment. */
function podmanCli(podman: Podman) {
  const args = ["--root", `${podman.dir}/storage`, "--runroot", `${podman.dir}/run`, "--storage-driver", "vfs", "--tmpdir", `${podman.dir}/tmp`, "--events-backend", "none"];
  const env = { ...process.env, CONTAINERS_CONF: `${podman.dir}/containers.conf`, XDG_RUNTIME_DIR: `${podman.dir}/xdg` } as Record<string, string>;
  return { args, env };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function waitForPort(port: number, process: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (process.exitCode !== null) throw new Error("the process exited before listening");
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => resolve(!!socket.end()));
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}

/** Sums and counts of a histogram per label value, from the gateway's /metrics. */
async function histogram(base: string, name: string, label: string): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const steps = new Map<string, { sum: number; count: number }>();
  for (const [, kind, value, number] of text.matchAll(new RegExp(`^${name}_(sum|count)\\{${label}="([^"]+)"\\} (\\S+)$`, "gm"))) {
    const entry = steps.get(value!) ?? { sum: 0, count: 0 };
    entry[kind as "sum" | "count"] = Number(number);
    steps.set(value!, entry);
  }
  return steps;
}

/** Heap in use plus memory held outside the heap (buffers), from the gateway's own /metrics. */
async function heapAndExternalBytes(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)![1]);
  return value("entryway_nodejs_heap_size_used_bytes") + value("entryway_nodejs_external_memory_bytes");
}

/** Bytes of binary WebSocket messages until the server closes; seconds from connecting to the close. */
async function wsBulk(url: string): Promise<{ seconds: number; bytes: number }> {
  const start = process.hrtime.bigint();
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let bytes = 0;
  ws.on("message", (data: Buffer) => (bytes += data.length));
  await new Promise((resolve, reject) => {
    ws.on("close", resolve);
    ws.on("error", reject);
  });
  return { seconds: since(start) / 1000, bytes };
}

async function main(): Promise<void> {
  const podman = await startPodman();
  const cli = podmanCli(podman);
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
  let relay: ChildProcess | undefined;
  try {
    let logs = "";
    gatewayProcess.stdout!.on("data", (d: Buffer) => (logs += d.toString()));
    while (!/"msg":"listening"/.test(logs)) await sleep(100);
    const port = Number(/"port":(\d+)/.exec(logs)![1]);
    const monitoring = `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(logs)![1]}`;
    const url = (command?: string) =>
      `ws://127.0.0.1:${port}/v1/enter?container=${CONTAINER}` + (command ? `&command=/bin/sh&command=-c&command=${encodeURIComponent(command)}` : "");
    const connect = (command?: string) => EntryClient.connect(url(command), { token: "bench", keepFrames: false });
    await podman.startContainer(CONTAINER);
    await podman.podman("exec", CONTAINER, "sh", "-c", `head -c ${BULK_MB * 1024 * 1024} /dev/zero | tr '\\0' 'x' > /tmp/bulk`);

    // 1. Memory per idle session, first, while the gateway process is fresh (one warm-up session before).
    const warmup = await connect();
    warmup.type("exit\n");
    await warmup.closed;
    await sleep(1000);
    const rssBefore = rssBytes(gatewayProcess.pid!);
    const heapBefore = await heapAndExternalBytes(monitoring);
    const idle: EntryClient[] = [];
    const openingStart = process.hrtime.bigint();
    for (let i = 0; i < IDLE_SESSIONS; i += IDLE_BATCH) {
      const batch = await Promise.all(Array.from({ length: IDLE_BATCH }, () => connect()));
      for (const c of batch) c.type("echo up\n");
      await Promise.all(batch.map((c) => c.waitFor(/up\r\n/, 300_000)));
      idle.push(...batch);
    }
    const openingSeconds = since(openingStart) / 1000;
    await sleep(2000);
    const rssAfter = rssBytes(gatewayProcess.pid!);
    const heapAfter = await heapAndExternalBytes(monitoring);
    for (const c of idle) c.type("exit\n");
    await Promise.all(idle.map((c) => c.closed));
    const rssPerSession = (rssAfter - rssBefore) / IDLE_SESSIONS;
    const heapPerSession = (heapAfter - heapBefore) / IDLE_SESSIONS;
    const sessionsIn512 = Math.floor((REPLICA_BYTES - rssBefore) / rssPerSession);

    // 2. Time to the first prompt byte, alternating: the gateway (default shell), then `podman exec -it`
    //    in a real terminal (node-pty), as a person would type it.
    const setupBefore = await histogram(monitoring, "entryway_session_setup_seconds", "step");
    const promptGateway: number[] = [];
    const promptDirect: number[] = [];
    for (let round = 0; round < PROMPT_ROUNDS; round++) {
      const start = process.hrtime.bigint();
      const client = await connect();
      await client.waitFor((c) => c.outputBytes > 0);
      promptGateway.push(since(start));
      client.type("exit\n");
      await client.closed;

      const directStart = process.hrtime.bigint();
      const terminal = pty.spawn("podman", [...cli.args, "exec", "-it", CONTAINER, "/bin/sh"], { cols: 80, rows: 24, env: cli.env });
      await new Promise<void>((resolve) => {
        const first = terminal.onData(() => {
          promptDirect.push(since(directStart));
          first.dispose();
          resolve();
        });
      });
      terminal.write("exit\r");
      await new Promise((resolve) => terminal.onExit(resolve));
    }
    const setupAfter = await histogram(monitoring, "entryway_session_setup_seconds", "step");
    const setupSteps = ["authorize", "resolve", "exec", "wrapper", "resize"].map((step) => {
      const after = setupAfter.get(step) ?? { sum: 0, count: 0 };
      const before = setupBefore.get(step) ?? { sum: 0, count: 0 };
      return { step, ms: after.count > before.count ? ((after.sum - before.sum) / (after.count - before.count)) * 1000 : NaN };
    });

    // 3. Throughput, in rounds: gateway, `podman exec -t`, websocketd relaying `podman exec -t`.
    const relayPort = await freePort();
    if (existsSync("/usr/bin/websocketd")) {
      relay = spawn(
        "websocketd",
        ["--address=127.0.0.1", `--port=${relayPort}`, "--binary", "--loglevel=error", "--passenv=PATH,CONTAINERS_CONF,XDG_RUNTIME_DIR", "podman", ...cli.args, "exec", "-t", CONTAINER, "sh", "-c", bulkScript],
        { env: cli.env, stdio: ["ignore", "ignore", "inherit"] },
      );
      await waitForPort(relayPort, relay);
    }
    const bulkBytes = BULK_MB * 1024 * 1024;
    const bulk = { gateway: [] as number[], direct: [] as number[], relay: [] as number[] };
    for (let round = 0; round < BULK_ROUNDS; round++) {
      const start = process.hrtime.bigint();
      const viaGateway = await connect(bulkScript);
      await viaGateway.closed;
      if (viaGateway.outputBytes !== bulkBytes) throw new Error(`bulk: got ${viaGateway.outputBytes} bytes`);
      bulk.gateway.push(BULK_MB / (since(start) / 1000));

      const directStart = process.hrtime.bigint();
      const direct = await run("podman", [...cli.args, "exec", "-t", CONTAINER, "sh", "-c", bulkScript], { env: cli.env, maxBuffer: 256 * 1024 * 1024, encoding: "buffer" });
      if (direct.stdout.length !== bulkBytes) throw new Error(`direct: got ${direct.stdout.length} bytes`);
      bulk.direct.push(BULK_MB / (since(directStart) / 1000));

      if (relay) {
        const relayed = await wsBulk(`ws://127.0.0.1:${relayPort}/`);
        if (relayed.bytes !== bulkBytes) throw new Error(`websocketd: got ${relayed.bytes} bytes`);
        bulk.relay.push(BULK_MB / relayed.seconds);
      }
    }

    // 4. Keystroke echo latency: one byte to `cat` in raw mode and back, through the gateway and directly.
    const viaGateway: number[] = [];
    const echo = await connect(rawCat);
    await sleep(500);
    for (let i = 0; i < KEYSTROKES; i++) {
      const before = echo.outputBytes;
      const start = process.hrtime.bigint();
      echo.type("k");
      await echo.waitFor((c) => c.outputBytes > before);
      viaGateway.push(since(start));
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
    await sleep(500);
    for (let i = 0; i < KEYSTROKES; i++) {
      const before = received;
      const start = process.hrtime.bigint();
      const arrived = new Promise<void>((resolve) => (wake = () => received > before && resolve()));
      exec.write(Buffer.from("k"));
      await arrived;
      viaApi.push(since(start));
    }
    exec.close();

    const gatewayMBs = median(bulk.gateway);
    const directMBs = median(bulk.direct);
    const relayMBs = bulk.relay.length > 0 ? median(bulk.relay) : NaN;
    const echoAdded = (p: number) => percentile(viaGateway, p) - percentile(viaApi, p);
    const promptAdded = median(promptGateway) - median(promptDirect);
    const rows = [
      ["", "through gateway", "direct", "gateway vs direct", "target"],
      [`bulk stdout, ${BULK_MB} MiB, median of ${BULK_ROUNDS} (MiB/s)`, fmt(gatewayMBs), `${fmt(directMBs)} (podman exec -t)`, `${fmt(gatewayMBs / directMBs, 2)}x`, `>= 0.9x: ${met(gatewayMBs / directMBs >= 0.9)}`],
      ["  the same through websocketd (MiB/s)", "", relay ? `${fmt(relayMBs)} (websocketd + podman exec -t)` : "skipped: no websocketd", relay ? `${fmt(gatewayMBs / relayMBs, 2)}x` : "", relay ? `>= 1x: ${met(gatewayMBs >= relayMBs)}` : ""],
      [`keystroke echo p50, ${KEYSTROKES} keys (ms)`, fmt(percentile(viaGateway, 50), 2), `${fmt(percentile(viaApi, 50), 2)} (Docker API stream)`, `${signed(echoAdded(50))} ms`, `< +0.5 ms: ${met(echoAdded(50) < 0.5)}`],
      [`keystroke echo p99, ${KEYSTROKES} keys (ms)`, fmt(percentile(viaGateway, 99), 2), `${fmt(percentile(viaApi, 99), 2)} (Docker API stream)`, `${signed(echoAdded(99))} ms`, `< +2 ms: ${met(echoAdded(99) < 2)}`],
      [`connect to first prompt byte, median of ${PROMPT_ROUNDS} (ms)`, fmt(median(promptGateway)), `${fmt(median(promptDirect))} (podman exec -it)`, `${signed(promptAdded, 1)} ms`, `< +50 ms: ${met(promptAdded < 50)}`],
      [`gateway RSS, ${IDLE_SESSIONS} idle sessions`, `${fmt(rssAfter / 2 ** 20)} MiB (from ${fmt(rssBefore / 2 ** 20)})`, "", `${fmt(rssPerSession / 1024)} KiB per session`, `<= 100 KiB: ${met(rssPerSession <= 100 * 1024)}`],
      [`gateway heap + external, ${IDLE_SESSIONS} idle`, `${fmt(heapAfter / 2 ** 20)} MiB (from ${fmt(heapBefore / 2 ** 20)})`, "", `${fmt(heapPerSession / 1024)} KiB per session`, ""],
      ["idle sessions in a 512 MiB replica", `${sessionsIn512} (extrapolated)`, "", "", ""],
    ];
    const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
    for (const row of rows) console.log(row.map((cell, col) => cell.padEnd(widths[col]!)).join("  ").trimEnd());
    console.log(`gateway setup per session, mean over the ${PROMPT_ROUNDS} prompt rounds (ms): ` + setupSteps.map(({ step, ms }) => `${step} ${fmt(ms)}`).join(", "));
    console.log(`bulk rounds (MiB/s): gateway ${bulk.gateway.map((v) => fmt(v)).join(" ")}; podman exec -t ${bulk.direct.map((v) => fmt(v)).join(" ")}` + (relay ? `; websocketd ${bulk.relay.map((v) => fmt(v)).join(" ")}` : ""));
    console.log(`prompt rounds (ms): gateway ${promptGateway.map((v) => fmt(v, 0)).join(" ")}; podman exec -it ${promptDirect.map((v) => fmt(v, 0)).join(" ")}`);
    console.log(`${IDLE_SESSIONS} idle sessions opened in ${fmt(openingSeconds)} s, ${IDLE_BATCH} at a time`);
    console.log(
      `idle sessions in 512 MiB = (512 MiB - ${fmt(rssBefore / 2 ** 20)} MiB at start) / ${fmt(rssPerSession / 1024)} KiB, extrapolated from the ${IDLE_SESSIONS}-session figure`,
    );
    console.log(`(load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} CPUs)`);
  } finally {
    relay?.kill("SIGTERM");
    gatewayProcess.kill("SIGTERM");
    await new Promise((r) => gatewayProcess.once("exit", r));
    webhook.close();
    await podman.stop();
  }
}

await main();
