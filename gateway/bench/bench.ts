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
// Each scenario is a function in scenarios.ts that returns its figures; report.ts prints them all, with
// their targets.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import { type AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { sleep } from "../../testkit/gateway/measure.js";
import { report } from "./report.js";
import {
  bulkThroughput,
  BULK_BYTES,
  CONTAINER,
  idleMemory,
  inProcessBulk,
  keystrokeEcho,
  promptTime,
  type Bench,
  type Gateway,
} from "./scenarios.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { startPodman, type Podman } from "../../testkit/gateway/podman.js";

const { values: options } = parseArgs({
  options: { baseline: { type: "string" }, pairs: { type: "string", default: "7" } },
});
const PAIRS = Math.max(1, Number(options.pairs));

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
  const webhook = http.createServer((_req, res) => res.end(JSON.stringify({ allowed: true, user: "bench" })));
  await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
  const webhookPort = (webhook.address() as AddressInfo).port;
  const gateways: Gateway[] = [];
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
    const bench: Bench = { podman, gateways, pairs: PAIRS, connectTo };
    await podman.startContainer(CONTAINER);
    await podman.podman("exec", CONTAINER, "sh", "-c", `head -c ${BULK_BYTES} /dev/zero | tr '\\0' 'x' > /tmp/bulk`);
    const loadBefore = loadavg();
    const memory = await idleMemory(bench);
    const prompt = await promptTime(bench);
    const bulk = await bulkThroughput(bench);
    const echo = await keystrokeEcho(bench);
    const inProcess = await inProcessBulk(bench);
    report(gateways, PAIRS, { memory, prompt, bulk, echo, inProcess, loadBefore });
  } finally {
    for (const gateway of gateways) {
      gateway.process.kill("SIGTERM");
      await new Promise((r) => (gateway.process.exitCode !== null ? r(null) : gateway.process.once("exit", r)));
    }
    webhook.close();
    await podman.stop();
  }
}

await main();
