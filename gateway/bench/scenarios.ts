// The benchmark's five scenarios (gateway/bench/bench.ts runs them, gateway/bench/report.ts prints
// their figures): each runs against podman's container and the gateways, and returns its figures.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pty from "node-pty";
import WebSocket from "ws";
import { dockerBackend } from "../src/backends/docker.js";
import { cpuSeconds, rssBytes, since, sleep, timeProcess } from "../../testkit/gateway/measure.js";
import { freePort, waitForPort } from "../../testkit/harness/net.js";
import type { EntryClient } from "../../testkit/gateway/client.js";
import type { Podman } from "../../testkit/gateway/podman.js";

export const BULK_MIB = 128;
export const BULK_BYTES = BULK_MIB * 2 ** 20;
export const IN_PROCESS_MIB = 64;
export const IN_PROCESS_ROUNDS = 3;
export const KEYSTROKES = 500;
export const PROMPT_ROUNDS = 10;
export const IDLE_SESSIONS = 500;
export const IDLE_BATCH = 25;
export const REPLICA_BYTES = 512 * 2 ** 20;
export const CONTAINER = "entryway-bench";
const rawCat = "stty raw -echo; cat";
/** Raw mode: the terminal passes the bytes as they are (no ONLCR), so the 128 MiB arrive as 128 MiB. */
const ttyBulk = "stty raw -echo; cat /tmp/bulk";
const run = promisify(execFile);

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

export interface Gateway {
  name: string;
  process: ChildProcess;
  /** The build's entryway CLI (dist/cli/main.js). */
  cli: string;
  port: number;
  monitoring: string;
}

/** What every scenario runs against: podman, its container, and the gateways (this build first). */
export interface Bench {
  podman: Podman;
  gateways: Gateway[];
  /** Bulk pairs (--pairs). */
  pairs: number;
  /** A session through `gateway`: the default shell, or `command` under /bin/sh -c. */
  connectTo(gateway: Gateway, command?: string): Promise<EntryClient>;
}

/** A session through this build's gateway. */
const connect = (bench: Bench, command?: string) => bench.connectTo(bench.gateways[0]!, command);

export interface IdleMemory {
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  openingSeconds: number;
}

/** 1. Memory per idle session, first, while each gateway process is fresh (one warm-up session before). */
export async function idleMemory({ gateways, connectTo }: Bench): Promise<IdleMemory[]> {
  const memory: IdleMemory[] = [];
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
  return memory;
}

/**
 * 2. Time to the first prompt byte, alternating: the gateway (default shell), then `podman exec -it`
 *    in a real terminal (node-pty), as a person would type it; and the gateway's setup steps meanwhile.
 */
export async function promptTime(bench: Bench) {
  const cli = bench.podman.cli;
  const current = bench.gateways[0]!;
  const setupBefore = await histogram(current.monitoring, "entryway_session_setup_seconds", "step");
  const promptGateway: number[] = [];
  const promptDirect: number[] = [];
  for (let round = 0; round < PROMPT_ROUNDS; round++) {
    const start = process.hrtime.bigint();
    const client = await connect(bench);
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
  return { promptGateway, promptDirect, setupSteps };
}

/**
 * 3. Bulk through the real client, whole processes, in alternating rounds: each gateway build
 *    (its CLI against its serve), then podman's CLI. One checked round first per command (output to a
 *    file whose size must be 128 MiB), not counted.
 */
export async function bulkThroughput({ podman, gateways, pairs }: Bench) {
  const cli = podman.cli;
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
  for (let pair = 0; pair < pairs; pair++) {
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
  return bulk;
}

/**
 * 4. Keystroke echo latency: one byte to `cat` in raw mode and back, through each gateway and
 *    directly, in alternating blocks of 100 keys.
 */
export async function keystrokeEcho({ podman, gateways, connectTo }: Bench) {
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
  return { viaGateways, viaApi };
}

/**
 * 5. In-process throughput, in rounds: an Entry client in this process, `podman exec -t` read into
 *    this process, websocketd relaying that same `podman exec -t` (when installed).
 */
export async function inProcessBulk(bench: Bench) {
  const cli = bench.podman.cli;
  let relay: ChildProcess | undefined;
  const relayPort = await freePort();
  const inProcessScript = `stty raw -echo; head -c ${IN_PROCESS_MIB * 2 ** 20} /tmp/bulk`;
  try {
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
      await waitForPort(relayPort, "websocketd", () => relay!.exitCode === null, 100);
    }
    const inProcessBytes = IN_PROCESS_MIB * 2 ** 20;
    const inProcess = { gateway: [] as number[], direct: [] as number[], relay: [] as number[] };
    for (let round = 0; round < IN_PROCESS_ROUNDS; round++) {
      const start = process.hrtime.bigint();
      const viaGateway = await connect(bench, inProcessScript);
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
    return { ...inProcess, relayed: relay !== undefined };
  } finally {
    relay?.kill("SIGTERM");
  }
}

export type Results = {
  memory: IdleMemory[];
  prompt: Awaited<ReturnType<typeof promptTime>>;
  bulk: Awaited<ReturnType<typeof bulkThroughput>>;
  echo: Awaited<ReturnType<typeof keystrokeEcho>>;
  inProcess: Awaited<ReturnType<typeof inProcessBulk>>;
  /** The load average before the scenarios. */
  loadBefore: number[];
};
