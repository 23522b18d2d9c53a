// Benchmark (not a test): prints, side by side from one run on podman, each figure next to its target:
//   1. bulk output, 128 MiB, through the real client: `entryway enter` (built, as users run it)
//      against `entryway serve`, timed as whole processes, against `podman exec -t` (TTY) and
//      `podman exec -i` (pipe mode) on the same container, all writing to /dev/null, in alternating
//      pairs (median of at least 7); with each gateway round, the CPU time the gateway process and
//      the podman service (the Docker API it reads from) spent, per MiB;
//   2. keystroke echo latency added by the gateway: one byte to `cat` in raw mode and back, through
//      the gateway against the Docker API stream read directly (p50/p99), in the same run as the bulk;
//   3. gateway memory per idle session with 500 sessions open;
//   4. time from connect to the first prompt byte, against `podman exec -it`, and where the gateway's
//      setup time goes (its entryway_session_setup_seconds histogram);
//   5. the in-process figures: bulk read by an Entry client in this process, against `podman exec -t`
//      read into this process (and websocketd relaying it, when installed).
// `--baseline <gateway dir>` (a built copy of gateway/, e.g. main's: its dist/cli/main.js and proto/) runs that
// build's `entryway serve` and `entryway enter` too, in the same rounds: before and after side by side.
// `--pairs <n>` sets the bulk pairs (default 7). The machine is shared: rounds alternate between the
// paths, so that a drift hits all of them alike, and each row prints its min, median and max.
// Run: npm run bench -w gateway   (compiles src/ to dist/ first; needs podman, runc and busybox-static
// like the tests, and GNU time at /usr/bin/time; websocketd for the relay row, else it is skipped)
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import pty from "node-pty";
import WebSocket from "ws";
import { dockerBackend } from "../src/backends/docker.js";
import {
  cpuSeconds,
  fmt,
  median,
  met,
  percentile,
  printTable,
  rssBytes,
  signed,
  since,
  sleep,
  spread,
  timeProcess,
} from "./measure.js";
import { EntryClient } from "../test/helpers/client.js";
import { startPodman, type Podman } from "../test/helpers/podman.js";

const { values: options } = parseArgs({
  options: { baseline: { type: "string" }, pairs: { type: "string", default: "7" } },
});
const BULK_MIB = 128;
const BULK_BYTES = BULK_MIB * 2 ** 20;
const PAIRS = Math.max(1, Number(options.pairs));
const IN_PROCESS_MIB = 64;
const IN_PROCESS_ROUNDS = 3;
const KEYSTROKES = 500;
const PROMPT_ROUNDS = 10;
const IDLE_SESSIONS = 500;
const IDLE_BATCH = 25;
const REPLICA_BYTES = 512 * 2 ** 20;
const CONTAINER = "entryway-bench";
const rawCat = "stty raw -echo; cat";
/** Raw mode: the terminal passes the bytes as they are (no ONLCR), so the 128 MiB arrive as 128 MiB. */
const ttyBulk = "stty raw -echo; cat /tmp/bulk";
const run = promisify(execFile);
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
async function histogram(
  base: string,
  name: string,
  label: string,
): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const steps = new Map<string, { sum: number; count: number }>();
  for (const [, kind, value, number] of text.matchAll(
    new RegExp(`^${name}_(sum|count)\\{${label}="([^"]+)"\\} (\\S+)$`, "gm"),
  )) {
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

interface Gateway {
  name: string;
  process: ChildProcess;
  /** The build's entryway CLI (dist/cli/main.js). */
  cli: string;
  port: number;
  monitoring: string;
}

/** `entryway serve` of the build whose CLI is `cli`, on the Docker backend, allowing every token through a loopback webhook. */
async function startGateway(name: string, cli: string, podman: Podman, webhookPort: number): Promise<Gateway> {
  const child = spawn(process.execPath, [cli, "serve"], {
    env: {
      PATH: process.env.PATH,
      ENTRYWAY_HOST: "127.0.0.1",
      ENTRYWAY_PORT: "0",
      ENTRYWAY_BACKEND: "docker",
      ENTRYWAY_DOCKER_HOST: `unix://${podman.socketPath}`,
      ENTRYWAY_AUTHORIZER: "webhook",
      ENTRYWAY_WEBHOOK_URL: `http://127.0.0.1:${webhookPort}/`,
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
  let logs = "";
  child.stdout!.on("data", (d: Buffer) => (logs += d.toString()));
  while (!/"msg":"listening"/.test(logs)) {
    if (child.exitCode !== null) throw new Error(`${name}: entryway serve exited`);
    await sleep(100);
  }
  return {
    name,
    process: child,
    cli,
    port: Number(/"port":(\d+)/.exec(logs)![1]),
    monitoring: `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(logs)![1]}`,
  };
}

async function main(): Promise<void> {
  if (!existsSync("/usr/bin/time")) throw new Error("GNU time is needed at /usr/bin/time (Debian package time)");
  const podman = await startPodman();
  const cli = podman.cli;
  const webhook = http.createServer((_req, res) => res.end(JSON.stringify({ allowed: true, user: "bench" })));
  await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
  const webhookPort = (webhook.address() as AddressInfo).port;
  const gateways: Gateway[] = [];
  let relay: ChildProcess | undefined;
  try {
    const current = await startGateway(
      "this build",
      fileURLToPath(new URL("../dist/cli/main.js", import.meta.url)),
      podman,
      webhookPort,
    );
    gateways.push(current);
    // npm runs the script in gateway/: a relative path is taken from where npm was called (INIT_CWD).
    if (options.baseline)
      gateways.push(
        await startGateway(
          `baseline (${options.baseline})`,
          resolve(process.env.INIT_CWD ?? process.cwd(), options.baseline, "dist/cli/main.js"),
          podman,
          webhookPort,
        ),
      );
    const url = (gateway: Gateway, command?: string) =>
      `ws://127.0.0.1:${gateway.port}/v1/enter?container=${CONTAINER}` +
      (command ? `&command=/bin/sh&command=-c&command=${encodeURIComponent(command)}` : "");
    const connectTo = (gateway: Gateway, command?: string) =>
      EntryClient.connect(url(gateway, command), { token: "bench", keepFrames: false });
    const connect = (command?: string) => connectTo(current, command);
    await podman.startContainer(CONTAINER);
    await podman.podman("exec", CONTAINER, "sh", "-c", `head -c ${BULK_BYTES} /dev/zero | tr '\\0' 'x' > /tmp/bulk`);
    const loadBefore = loadavg();

    // 1. Memory per idle session, first, while each gateway process is fresh (one warm-up session before).
    const memory: {
      rssBefore: number;
      rssAfter: number;
      heapBefore: number;
      heapAfter: number;
      openingSeconds: number;
    }[] = [];
    for (const gateway of gateways) {
      const open = () => connectTo(gateway);
      const warmup = await open();
      warmup.type("exit\n");
      await warmup.closed;
      await sleep(1000);
      const rssBefore = rssBytes(gateway.process.pid!);
      const heapBefore = await heapAndExternalBytes(gateway.monitoring);
      const idle: EntryClient[] = [];
      const openingStart = process.hrtime.bigint();
      for (let i = 0; i < IDLE_SESSIONS; i += IDLE_BATCH) {
        const batch = await Promise.all(Array.from({ length: IDLE_BATCH }, () => open()));
        for (const c of batch) c.type("echo up\n");
        await Promise.all(batch.map((c) => c.waitFor(/up\r\n/, 300_000)));
        idle.push(...batch);
      }
      const openingSeconds = since(openingStart) / 1000;
      await sleep(2000);
      memory.push({
        rssBefore,
        rssAfter: rssBytes(gateway.process.pid!),
        heapBefore,
        heapAfter: await heapAndExternalBytes(gateway.monitoring),
        openingSeconds,
      });
      for (const c of idle) c.type("exit\n");
      await Promise.all(idle.map((c) => c.closed));
    }
    const { rssBefore, rssAfter, heapBefore, heapAfter } = memory[0]!;
    const rssPerSession = (rssAfter - rssBefore) / IDLE_SESSIONS;
    const heapPerSession = (heapAfter - heapBefore) / IDLE_SESSIONS;
    const sessionsIn512 = Math.floor((REPLICA_BYTES - rssBefore) / rssPerSession);

    // 2. Time to the first prompt byte, alternating: the gateway (default shell), then `podman exec -it`
    //    in a real terminal (node-pty), as a person would type it.
    const setupBefore = await histogram(current.monitoring, "entryway_session_setup_seconds", "step");
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
      const terminal = pty.spawn("podman", [...cli.args, "exec", "-it", CONTAINER, "/bin/sh"], {
        cols: 80,
        rows: 24,
        env: cli.env as Record<string, string>,
      });
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
    const setupAfter = await histogram(current.monitoring, "entryway_session_setup_seconds", "step");
    const setupSteps = ["authorize", "resolve", "exec", "wrapper", "resize"].map((step) => {
      const after = setupAfter.get(step) ?? { sum: 0, count: 0 };
      const before = setupBefore.get(step) ?? { sum: 0, count: 0 };
      return {
        step,
        ms: after.count > before.count ? ((after.sum - before.sum) / (after.count - before.count)) * 1000 : NaN,
      };
    });

    // 3. Bulk through the real client, whole processes, in alternating rounds: each gateway build
    //    (its CLI against its serve), then podman's CLI. One checked round first per command (output to a
    //    file whose size must be 128 MiB), not counted.
    const modes = [
      {
        name: "TTY",
        flag: "--tty",
        command: ["sh", "-c", ttyBulk],
        podman: ["exec", "-t", CONTAINER, "sh", "-c", ttyBulk],
        direct: "podman exec -t",
        target: 1.0,
      },
      {
        name: "pipe",
        flag: "-T",
        command: ["cat", "/tmp/bulk"],
        podman: ["exec", "-i", CONTAINER, "cat", "/tmp/bulk"],
        direct: "podman exec -i",
        target: 0.9,
      },
    ];
    const clientEnv = (gateway: Gateway) => ({
      ...process.env,
      ENTRYWAY_GATEWAY: `http://127.0.0.1:${gateway.port}`,
      ENTRYWAY_TOKEN: "bench",
    });
    const enterCommand = (gateway: Gateway, mode: (typeof modes)[number]) => [
      process.execPath,
      gateway.cli,
      "enter",
      mode.flag,
      CONTAINER,
      "--",
      ...mode.command,
    ];
    const check = mkdtempSync(join(tmpdir(), "entryway-bench-check-"));
    const bulk = modes.map((mode) => ({
      mode,
      through: gateways.map(() => ({
        wall: [] as number[],
        cpu: [] as number[],
        gatewayCpu: [] as number[],
        serviceCpu: [] as number[],
      })),
      direct: { wall: [] as number[], cpu: [] as number[], serviceCpu: [] as number[] },
    }));
    try {
      for (const mode of modes) {
        for (const gateway of gateways) {
          await timeProcess(enterCommand(gateway, mode), clientEnv(gateway), join(check, "out"));
          if (statSync(join(check, "out")).size !== BULK_BYTES)
            throw new Error(`${gateway.name}, ${mode.name}: got ${statSync(join(check, "out")).size} bytes`);
        }
        await timeProcess(["podman", ...cli.args, ...mode.podman], cli.env, join(check, "out"));
        if (statSync(join(check, "out")).size !== BULK_BYTES)
          throw new Error(`${mode.direct}: got ${statSync(join(check, "out")).size} bytes`);
      }
    } finally {
      rmSync(check, { recursive: true, force: true });
    }
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const { mode, through, direct } of bulk) {
        for (const [i, gateway] of gateways.entries()) {
          const [gatewayCpu, serviceCpu] = [cpuSeconds(gateway.process.pid!), cpuSeconds(podman.servicePid)];
          const result = await timeProcess(enterCommand(gateway, mode), clientEnv(gateway));
          through[i]!.wall.push(result.wall);
          through[i]!.cpu.push(result.cpu);
          through[i]!.gatewayCpu.push(cpuSeconds(gateway.process.pid!) - gatewayCpu);
          through[i]!.serviceCpu.push(cpuSeconds(podman.servicePid) - serviceCpu);
        }
        const serviceCpu = cpuSeconds(podman.servicePid);
        const result = await timeProcess(["podman", ...cli.args, ...mode.podman], cli.env);
        direct.wall.push(result.wall);
        direct.cpu.push(result.cpu);
        direct.serviceCpu.push(cpuSeconds(podman.servicePid) - serviceCpu);
      }
    }

    // 4. Keystroke echo latency: one byte to `cat` in raw mode and back, through each gateway and
    //    directly, in alternating blocks of 100 keys.
    const viaGateways = gateways.map(() => [] as number[]);
    const echoes = await Promise.all(gateways.map((gateway) => connectTo(gateway, rawCat)));
    const backend = dockerBackend(`unix://${podman.socketPath}`);
    const target = await backend.resolve({ kind: "docker", container: CONTAINER });
    const viaApi: number[] = [];
    let received = 0;
    let wake: () => void = () => {};
    const exec = await backend.exec(
      target,
      ["/bin/sh", "-c", rawCat],
      { cols: 80, rows: 24 },
      {
        onOutput: (chunk) => {
          received += chunk.length;
          wake();
        },
        onEnd: () => {},
      },
    );
    await sleep(500);
    for (let block = 0; block < KEYSTROKES / 100; block++) {
      for (const [i, echo] of echoes.entries()) {
        for (let key = 0; key < 100; key++) {
          const before = echo.outputBytes;
          const start = process.hrtime.bigint();
          echo.type("k");
          await echo.waitFor((c) => c.outputBytes > before);
          viaGateways[i]!.push(since(start));
        }
      }
      for (let key = 0; key < 100; key++) {
        const before = received;
        const start = process.hrtime.bigint();
        const arrived = new Promise<void>((resolve) => (wake = () => received > before && resolve()));
        exec.write(Buffer.from("k"));
        await arrived;
        viaApi.push(since(start));
      }
    }
    for (const echo of echoes) echo.ws.close();
    exec.close();
    const viaGateway = viaGateways[0]!;

    // 5. In-process throughput, in rounds: an Entry client in this process, `podman exec -t` read into
    //    this process, websocketd relaying that same `podman exec -t`.
    const relayPort = await freePort();
    const inProcessScript = `stty raw -echo; head -c ${IN_PROCESS_MIB * 2 ** 20} /tmp/bulk`;
    if (existsSync("/usr/bin/websocketd")) {
      relay = spawn(
        "websocketd",
        [
          "--address=127.0.0.1",
          `--port=${relayPort}`,
          "--binary",
          "--loglevel=error",
          "--passenv=PATH,CONTAINERS_CONF,XDG_RUNTIME_DIR",
          "podman",
          ...cli.args,
          "exec",
          "-t",
          CONTAINER,
          "sh",
          "-c",
          inProcessScript,
        ],
        { env: cli.env, stdio: ["ignore", "ignore", "inherit"] },
      );
      await waitForPort(relayPort, relay);
    }
    const inProcessBytes = IN_PROCESS_MIB * 2 ** 20;
    const inProcess = { gateway: [] as number[], direct: [] as number[], relay: [] as number[] };
    for (let round = 0; round < IN_PROCESS_ROUNDS; round++) {
      const start = process.hrtime.bigint();
      const viaGateway = await connect(inProcessScript);
      await viaGateway.closed;
      if (viaGateway.outputBytes !== inProcessBytes)
        throw new Error(`in-process bulk: got ${viaGateway.outputBytes} bytes`);
      inProcess.gateway.push(IN_PROCESS_MIB / (since(start) / 1000));
      const directStart = process.hrtime.bigint();
      const direct = await run("podman", [...cli.args, "exec", "-t", CONTAINER, "sh", "-c", inProcessScript], {
        env: cli.env,
        maxBuffer: 256 * 1024 * 1024,
        encoding: "buffer",
      });
      if (direct.stdout.length !== inProcessBytes) throw new Error(`direct: got ${direct.stdout.length} bytes`);
      inProcess.direct.push(IN_PROCESS_MIB / (since(directStart) / 1000));
      if (relay) {
        const relayed = await wsBulk(`ws://127.0.0.1:${relayPort}/`);
        if (relayed.bytes !== inProcessBytes) throw new Error(`websocketd: got ${relayed.bytes} bytes`);
        inProcess.relay.push(IN_PROCESS_MIB / relayed.seconds);
      }
    }

    // The report.
    const rows: string[][] = [["", "through the gateway", "direct", "gateway vs direct", "target"]];
    for (const { mode, through, direct } of bulk) {
      const directSpeed = BULK_MIB / median(direct.wall);
      for (const [i, gateway] of gateways.entries()) {
        const runs = through[i]!;
        // Pair by pair: each gateway round against the direct round of the same pair.
        const ratios = runs.wall.map((wall, pair) => direct.wall[pair]! / wall);
        const label = gateways.length > 1 ? `, ${gateway.name}` : "";
        rows.push([
          `bulk ${mode.name} ${BULK_MIB} MiB, real CLI${label}: s, median of ${PAIRS} (min-max)`,
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
  } finally {
    relay?.kill("SIGTERM");
    for (const gateway of gateways) {
      gateway.process.kill("SIGTERM");
      await new Promise((r) => (gateway.process.exitCode !== null ? r(null) : gateway.process.once("exit", r)));
    }
    webhook.close();
    await podman.stop();
  }
}

await main();
