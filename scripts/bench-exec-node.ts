// Benchmark (not a test) of the exec path on the real node (issue 32, parts 2 and 3): a real
// kube-apiserver, kubelet and containerd (testkit/harness/control-plane.ts, node.ts), one target pod.
//
// Part 2, `entryway enter` through the exec gateway AS A POD (the chart's Deployment, its image built
// from gateway/Dockerfile, reached at its pod IP) against `kubectl exec` (the `kube` multi-call
// binary's kubectl, k8s.io/kubernetes v1.37.2) through the API server and the kubelet, both as user
// alice (a ServiceAccount token), whole processes, in alternating pairs:
//   - bulk 128 MiB with a TTY (stdin a pseudo-terminal, stdout /dev/null) and in pipe mode, wall
//     time and the CPU of every process on the path (client from GNU time; gateway, API server,
//     kubelet and the target pod's containerd-shim from /proc/<pid>/stat before and after);
//   - keystroke echo: one byte to `cat` in raw mode and back, each client on a pseudo-terminal;
//   - time from spawning the client to the first byte on its terminal (the shell's prompt).
//   Then one more round of each bulk stream through `entryway serve` run here under `node --cpu-prof`
//   (the same build, the same API server), whose profile says where the gateway's CPU goes.
// Part 3 (`--sessions`): idle sessions on ONE gateway, a process here (`entryway serve`, the
//   kubernetes backend, the chart's ServiceAccount's token): the pod's 256 MiB limit and its
//   container's file-descriptor limit are the chart's, not the gateway's. At each step (1,000,
//   5,000, 10,000 by default) its RSS per session (no forced GC), sessions refused or dropped, and
//   a fresh session's keystroke echo p50/p99.
// Run: npm run bench:exec-node [-- --pairs 5 --sessions 1000,5000,10000 --only kubectl|sessions --hold <s>]
// (--hold: after part 2, the clients' environment is written to $TMPDIR/entryway-bench-exec-node.env
// and the node kept up that long, to time a client from outside with another tool)
// (as root, like the real node; the npm script raises `ulimit -n`; needs kernel.pty.max above the
// session count, which it raises for the run when lower). Prints the load average beside the figures: the
// machine is shared.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import {
  cpuSeconds,
  fmt,
  met,
  percentile,
  printTable,
  rssBytes,
  since,
  sleep,
  timeProcess,
} from "../testkit/gateway/measure";
import { EntryClient } from "../testkit/gateway/client";
import { startControlPlane, type ControlPlane } from "../testkit/harness/control-plane";
import { helmBinaries, helmEnv, repoRoot } from "../testkit/harness/helm";
import { grantRole, POD_EXEC_RULE, serviceAccountToken } from "../testkit/harness/kube-users";
import { freePort } from "../testkit/harness/net";
import { startNode, type RealNode } from "../testkit/harness/node";
import { chartImageArgs, projectImages } from "../testkit/harness/project-images";
import { realTool } from "../testkit/harness/realcp-tool";
import { restrictedPod } from "../testkit/harness/restricted-pod";
import { printPathReport, type Side } from "./bench/exec-node-report";
import { findProcess, ppid } from "./bench/exec-path-processes";
import { firstByte, ptyEcho, timeInPty, type PtyRun } from "./bench/pty-clients";

const { values: options } = parseArgs({
  options: {
    pairs: { type: "string", default: "5" },
    keys: { type: "string", default: "400" },
    sessions: { type: "string", default: "1000,5000,10000" },
    "sessions-budget": { type: "string", default: "900" },
    only: { type: "string" },
    hold: { type: "string", default: "0" },
  },
});
const BULK_MIB = 128;
const BULK_BYTES = BULK_MIB * 2 ** 20;
const PAIRS = Math.max(1, Number(options.pairs));
const KEYS = Math.max(100, Number(options.keys));
const PROMPT_ROUNDS = 8;
const STEPS = options.sessions.split(",").map(Number);
const OPEN_BATCH = 50;
const FRESH_KEYS = 300;
const TEAM = "bench-team";
const EXEC_NS = "bench-exec";
const rawCat = "stty raw -echo; cat";
const ttyBulk = "stty raw -echo; cat /tmp/bulk";
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

async function main(): Promise<void> {
  if (!existsSync("/usr/bin/time")) throw new Error("GNU time is needed at /usr/bin/time (Debian package time)");
  const nofile = /Max open files\s+(\d+)\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"))!;
  const maxSessions = Math.max(...STEPS);
  const ptyMax = Number(readFileSync("/proc/sys/kernel/pty/max", "utf8"));
  if (options.only !== "kubectl" && ptyMax < maxSessions + 2048)
    writeFileSync("/proc/sys/kernel/pty/max", String(maxSessions + 4096));
  console.log(
    `bench-exec-node: ulimit -n ${nofile[1]} (hard ${nofile[2]}), kernel.pty.max ${readFileSync("/proc/sys/kernel/pty/max", "utf8").trim()} (was ${ptyMax}), load ${load()} on ${cpus().length} CPUs`,
  );
  const started = performance.now();
  const controlPlane: ControlPlane = await startControlPlane({ kwok: false });
  let node: RealNode | undefined;
  const children: ChildProcess[] = [];
  const work = mkdtempSync(path.join(tmpdir(), "entryway-bench-node-"));
  try {
    node = await startNode(controlPlane);
    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfig);
    const core = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const { gateway: image } = await projectImages();
    await node.importImages([image.archive]);
    console.log(`bench-exec-node: control plane, node and images in ${fmt((performance.now() - started) / 1000)} s`);

    // alice may read pods (kubectl exec GETs the pod first) and exec into them in the team's namespace.
    await core.createNamespace({ body: { metadata: { name: TEAM } } });
    await core.createNamespacedServiceAccount({ namespace: TEAM, body: { metadata: { name: "alice" } } });
    await grantRole(
      rbac,
      TEAM,
      { name: "exec", rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }, POD_EXEC_RULE] },
      [{ namespace: TEAM, name: "alice" }],
    );
    const tokenOf = (namespace: string, name: string, audiences: string[]) =>
      serviceAccountToken(core, { namespace, name }, audiences, 36000);
    await core.createNamespacedPod({
      namespace: TEAM,
      body: restrictedPod("target", [
        "sh",
        "-c",
        `head -c ${BULK_BYTES} /dev/zero | tr '\\0' x > /tmp/bulk && touch /tmp/ready && exec sleep 86400`,
      ]),
    });

    // The chart's exec gateway (kubernetes backend and authorizer), one replica, entering the team's namespace.
    const helm = helmBinaries()[0]!;
    const install = spawn(
      helm.path,
      [
        "install",
        "exec",
        path.join(repoRoot, "charts", "entryway"),
        "-n",
        EXEC_NS,
        "--create-namespace",
        "--set",
        "execGateway.enabled=true",
        "--set",
        "execGateway.replicas=1",
        "--set",
        `execGateway.targetNamespaces={${TEAM}}`,
        ...chartImageArgs("execGateway", image),
        "--set",
        "execGateway.settings.logLevel=warn",
        "--wait",
        "--timeout",
        "5m",
      ],
      {
        env: helmEnv(controlPlane.kubeconfig),
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    if ((await new Promise((r) => install.once("exit", r))) !== 0) throw new Error("helm install failed");
    const ready = async (namespace: string, selector: string) => {
      for (let i = 0; i < 600; i++) {
        const pod = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.find((p) =>
          p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        );
        if (pod) return pod;
        await sleep(500);
      }
      throw new Error(`no Ready pod ${namespace} ${selector}:\n${node!.tail("kubelet", 30)}`);
    };
    const gatewayPod = await ready(EXEC_NS, "app.kubernetes.io/name=exec-gateway");
    const targetPod = await ready(TEAM, "app=target");
    const gatewayPort = gatewayPod.spec!.containers[0]!.ports!.find((p) => p.name === "http")!.containerPort;
    const gatewayUrl = `ws://${gatewayPod.status!.podIP!}:${gatewayPort}`;
    const containerPid = async (pod: typeof gatewayPod) => {
      const id = pod.status!.containerStatuses![0]!.containerID!.replace("containerd://", "");
      return Number((await node!.ctr("tasks", "ps", id)).split("\n")[1]!.trim().split(/\s+/)[0]);
    };
    const pids = {
      gateway: await containerPid(gatewayPod),
      "API server": findProcess("kube-apiserver", controlPlane.dir),
      kubelet: findProcess("kubelet", node.dir),
      // The target pod's shim copies every exec's output from the process to the kubelet's stream (both paths).
      "target's shim": ppid(await containerPid(targetPod)),
    };
    console.log(
      `bench-exec-node: gateway pod ${gatewayPod.metadata!.name} at ${gatewayUrl}; pids ${JSON.stringify(pids)}`,
    );

    const kube = realTool("kube");
    const kubectl = path.join(kube, "kubectl");
    const alice = await tokenOf(TEAM, "alice", ["entryway", "https://kubernetes.default.svc.cluster.local"]);
    const kubeconfig = path.join(work, "alice.kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          { name: "real", cluster: { server: controlPlane.server, "certificate-authority": controlPlane.caFile } },
        ],
        users: [{ name: "alice", user: { token: alice } }],
        contexts: [{ name: "real", context: { cluster: "real", user: "alice", namespace: TEAM } }],
        "current-context": "real",
      }),
    );
    const cli = path.join(repoRoot, "gateway", "dist", "cli", "main.js");
    if (!existsSync(cli)) throw new Error(`${cli} is missing: npm run build -w gateway`);
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ENTRYWAY_"))),
      HOME: work,
      TERM: "xterm-256color",
      ENTRYWAY_GATEWAY: gatewayUrl,
      ENTRYWAY_TOKEN: alice,
      KUBECONFIG: kubeconfig,
    };
    const entryway = (...args: string[]) => [process.execPath, cli, "enter", "--insecure", ...args];

    if (options.only !== "sessions") {
      const paths = [
        {
          mode: "TTY",
          gateway: entryway("--tty", `${TEAM}/target`, "--", "sh", "-c", ttyBulk),
          kubectl: [kubectl, "exec", "-it", "target", "--", "sh", "-c", ttyBulk],
          timed: timeInPty,
        },
        {
          mode: "pipe",
          gateway: entryway("-T", `${TEAM}/target`, "--", "cat", "/tmp/bulk"),
          kubectl: [kubectl, "exec", "-i", "target", "--", "cat", "/tmp/bulk"],
          timed: (command: string[], e: NodeJS.ProcessEnv) => timeProcess(command, e),
        },
      ];
      // One checked round of each pipe-mode command: 128 MiB arrive.
      const check = path.join(work, "out");
      for (const command of [paths[1]!.gateway, paths[1]!.kubectl]) {
        await timeProcess(command, env, check);
        if (statSync(check).size !== BULK_BYTES) throw new Error(`${command[0]}: got ${statSync(check).size} bytes`);
      }
      rmSync(check);
      const side = (): Side => ({
        wall: [],
        cpu: [],
        path: { gateway: [], "API server": [], kubelet: [], "target's shim": [] },
      });
      const bulk = paths.map((p) => ({ ...p, via: side(), direct: side() }));
      const loadAtStart = load();
      const measure = async (
        s: Side,
        command: string[],
        timed: (c: string[], e: NodeJS.ProcessEnv) => Promise<PtyRun>,
      ) => {
        const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
        const run = await timed(command, env);
        s.wall.push(run.wall);
        s.cpu.push(run.cpu);
        for (const [k, pid] of Object.entries(pids)) s.path[k as keyof typeof pids].push(cpuSeconds(pid) - before[k]!);
      };
      for (let pair = 0; pair < PAIRS; pair++)
        for (const b of bulk) {
          // Which goes first alternates too.
          const order =
            pair % 2 === 0
              ? ([b.via, b.gateway, b.direct, b.kubectl] as const)
              : ([b.direct, b.kubectl, b.via, b.gateway] as const);
          await measure(order[0], order[1], b.timed);
          await measure(order[2], order[3], b.timed);
        }

      // Keystroke echo, alternating blocks of 100 keys, each client on a terminal.
      const echoGateway = await ptyEcho(entryway(`${TEAM}/target`, "--", "sh", "-c", rawCat), env);
      const echoKubectl = await ptyEcho([kubectl, "exec", "-it", "target", "--", "sh", "-c", rawCat], env);
      const echoes = { gateway: [] as number[], kubectl: [] as number[] };
      for (let block = 0; block < KEYS / 100; block++)
        for (const [name, echo] of [
          ["gateway", echoGateway],
          ["kubectl", echoKubectl],
        ] as const)
          for (let key = 0; key < 100; key++) echoes[name].push(await echo.key());
      await echoGateway.stop();
      await echoKubectl.stop();

      // First prompt byte, alternating.
      const prompt = { gateway: [] as number[], kubectl: [] as number[] };
      for (let round = 0; round < PROMPT_ROUNDS; round++) {
        prompt.gateway.push(await firstByte(entryway(`${TEAM}/target`), env));
        prompt.kubectl.push(await firstByte([kubectl, "exec", "-it", "target", "--", "sh"], env));
      }
      const loadAtEnd = load();

      // The gateway's CPU profile for the same streams: `entryway serve` here under node --cpu-prof,
      // as the chart's ServiceAccount, against the same API server.
      const profileDir = path.join(work, "profile");
      const profiled = await startHostGateway(["--cpu-prof", `--cpu-prof-dir=${profileDir}`], 10);
      const hostEnv = { ...env, ENTRYWAY_GATEWAY: profiled.url, ENTRYWAY_TOKEN: "bench" };
      const profiledCpu: Record<string, number> = {};
      for (const b of bulk) {
        const before = cpuSeconds(profiled.process.pid!);
        await b.timed(b.gateway, hostEnv);
        profiledCpu[b.mode] = cpuSeconds(profiled.process.pid!) - before;
      }
      await profiled.stop();
      const profileFile = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"));

      printPathReport({
        bulk,
        echoes,
        prompt,
        load: { start: loadAtStart, end: loadAtEnd },
        profiledCpu,
        profile: profileFile && path.join(profileDir, profileFile),
        sizes: { pairs: PAIRS, bulkMiB: BULK_MIB, promptRounds: PROMPT_ROUNDS },
      });
    }

    /** `entryway serve` of this build as a process here: the kubernetes backend as the chart's ServiceAccount, every token allowed by a loopback webhook. */
    async function startHostGateway(nodeFlags: string[], maxSessions: number) {
      const webhook = http.createServer((_req, res) => res.end(JSON.stringify({ allowed: true, user: "bench" })));
      await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
      const gatewayKubeconfig = path.join(work, "gateway.kubeconfig");
      writeFileSync(
        gatewayKubeconfig,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [
            { name: "real", cluster: { server: controlPlane.server, "certificate-authority": controlPlane.caFile } },
          ],
          users: [
            {
              name: "gateway",
              user: {
                token: await tokenOf(EXEC_NS, "exec-exec-gateway", ["https://kubernetes.default.svc.cluster.local"]),
              },
            },
          ],
          contexts: [{ name: "real", context: { cluster: "real", user: "gateway" } }],
          "current-context": "real",
        }),
      );
      const env = {
        PATH: process.env.PATH,
        ENTRYWAY_HOST: "127.0.0.1",
        ENTRYWAY_BACKEND: "kubernetes",
        ENTRYWAY_KUBECONFIG: gatewayKubeconfig,
        ENTRYWAY_AUTHORIZER: "webhook",
        ENTRYWAY_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/`,
        ENTRYWAY_MAX_SESSIONS: String(maxSessions + 10),
        ENTRYWAY_MAX_SESSIONS_PER_USER: String(maxSessions + 10),
        ENTRYWAY_MAX_PENDING_CONNECTIONS: "1000",
        ENTRYWAY_MAX_PENDING_PER_SOURCE: "1000",
        ENTRYWAY_AUTH_ATTEMPTS_PER_MINUTE: "1000000",
        ENTRYWAY_PORT: String(await freePort()),
        ENTRYWAY_METRICS_PORT: String(await freePort()),
        ENTRYWAY_LOG_LEVEL: "warn",
        ENTRYWAY_AUDIT_FILE: "/dev/null",
      };
      const child = spawn(process.execPath, [...nodeFlags, cli, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
      children.push(child);
      let logs = "";
      child.stdout!.on("data", (d: Buffer) => (logs = (logs + d.toString()).slice(-20000)));
      child.stderr!.on("data", (d: Buffer) => (logs = (logs + d.toString()).slice(-20000)));
      const port = Number(env.ENTRYWAY_PORT);
      for (let i = 0; !(await portOpen(port)); i++) {
        if (child.exitCode !== null || i > 100) throw new Error(`entryway serve does not listen: ${logs}`);
        await sleep(200);
      }
      return {
        process: child,
        url: `ws://127.0.0.1:${port}`,
        logs: () => logs,
        async stop() {
          child.kill("SIGTERM");
          await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
          webhook.close();
        },
      };
    }

    if (Number(options.hold) > 0) {
      // For timing a client from outside: its environment in a file, the node kept up meanwhile.
      const file = path.join(tmpdir(), "entryway-bench-exec-node.env");
      const vars = { ...env, CLI: cli, KUBECTL: kubectl, TEAM };
      writeFileSync(
        file,
        Object.entries(vars)
          .filter(([k]) => /^(ENTRYWAY_|KUBECONFIG|HOME|CLI|KUBECTL|TEAM|TERM)/.test(k))
          .map(([k, v]) => `export ${k}='${v}'\n`)
          .join(""),
      );
      console.log(`bench-exec-node: the clients' environment is in ${file}; holding the node ${options.hold} s`);
      await sleep(Number(options.hold) * 1000);
    }

    if (options.only !== "kubectl") {
      const gateway = await startHostGateway([], maxSessions + 10);
      const url = `${gateway.url}/v1/enter?namespace=${TEAM}&pod=target`;
      const open = () => EntryClient.connect(url, { token: "bench", keepFrames: false });
      // One session first, so that what the first one sets up once is not counted per session.
      const warm = await open();
      warm.type("echo up\n");
      await warm.waitFor(/up\r\n/, 120_000);
      warm.type("exit\n");
      await warm.closed;
      await sleep(2000);
      const gwPid = gateway.process.pid!;
      const rssStart = rssBytes(gwPid);
      const others = {
        "API server": pids["API server"],
        kubelet: pids.kubelet,
        containerd: findProcess("containerd", node.dir),
        "target's shim": pids["target's shim"],
      };
      const othersStart = Object.fromEntries(Object.entries(others).map(([k, pid]) => [k, rssBytes(pid)]));
      const idle: EntryClient[] = [];
      // Every process on the path holds descriptors per session; none may pass its limit (RLIMIT_NOFILE,
      // inherited from this process: the npm script raises it to the hard limit).
      const watched = { gateway: gateway.process.pid!, ...others };
      const fdStart = Object.fromEntries(Object.entries(watched).map(([k, pid]) => [k, fdCount(pid)]));
      let stoppedBy = "";
      const fdRoom = (batch: number) => {
        if (idle.length < 200) return "";
        for (const [k, pid] of Object.entries(watched)) {
          const count = fdCount(pid);
          const perSession = (count - fdStart[k]!) / idle.length;
          // A tenth of the limit kept free: the sessions' ends and the node's teardown need descriptors too.
          if (count + perSession * batch > nofileLimit(pid) * 0.9)
            return `${k} at ${count} descriptors (${fmt(perSession, 2)} per session) of its limit ${nofileLimit(pid)}`;
        }
        return "";
      };
      let refused = 0;
      let dropped = 0;
      const firstError: string[] = [];
      const opening = process.hrtime.bigint();
      const budgetMs = Number(options["sessions-budget"]) * 1000;
      const curve: string[][] = [
        [
          "idle sessions",
          "gateway RSS (MiB)",
          "per session (KiB)",
          "target <= 32 KiB",
          "refused, dropped",
          "fresh echo p50 / p99 (ms)",
          "target p99 < 10 ms",
          "API server, kubelet, containerd, shim: RSS (KiB), descriptors per session",
          "opened in (s)",
          "load",
        ],
      ];
      for (const step of STEPS) {
        while (idle.length < step && since(opening) < budgetMs && !(stoppedBy = fdRoom(OPEN_BATCH))) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(OPEN_BATCH, step - idle.length) }, async () => {
              try {
                const c = await open();
                c.type("echo up\n");
                await c.waitFor(/up\r\n/, 300_000);
                return c;
              } catch (error) {
                refused++;
                if (firstError.length < 3) firstError.push(String(error).slice(0, 300));
                return undefined;
              }
            }),
          );
          for (const c of batch)
            if (c) {
              idle.push(c);
              void c.closed.then((closed) => {
                dropped++;
                if (firstError.length < 3) firstError.push(`dropped: ${JSON.stringify(closed)}`);
              });
            }
          if (refused > 50) break;
        }
        await sleep(3000);
        const rss = rssBytes(gwPid);
        const perSession = (rss - rssStart) / idle.length;
        const fresh = await open().then(async (c) => {
          c.type(`${rawCat}\n`);
          await sleep(1500);
          const times: number[] = [];
          for (let key = 0; key < FRESH_KEYS; key++) {
            const before = c.outputBytes;
            const start = process.hrtime.bigint();
            c.type("k");
            await c.waitFor((x) => x.outputBytes > before, 30_000);
            times.push(since(start));
          }
          c.ws.close();
          await c.closed;
          return times;
        });
        const p99 = percentile(fresh, 99);
        curve.push([
          `${idle.length}${idle.length < step ? ` of ${step} (stopped: ${stoppedBy || `budget of ${options["sessions-budget"]} s spent`})` : ""}`,
          fmt(rss / 2 ** 20),
          fmt(perSession / 1024),
          `${met(perSession <= 32 * 1024)}${perSession > 32 * 1024 ? `, over by ${fmt(perSession / 1024 - 32)} KiB` : ""}`,
          `${refused}, ${dropped}`,
          `${fmt(percentile(fresh, 50), 2)} / ${fmt(p99, 2)}`,
          `${met(p99 < 10)}${p99 >= 10 ? `, over by ${fmt(p99 - 10, 2)} ms` : ""}`,
          Object.entries(others)
            .map(
              ([k, pid]) =>
                `${fmt((rssBytes(pid) - othersStart[k]!) / idle.length / 1024)} ${fmt((fdCount(pid) - fdStart[k]!) / idle.length, 1)}`,
            )
            .join(", ") +
            `; gateway ${fmt((fdCount(watched.gateway) - fdStart.gateway!) / idle.length, 1)} descriptors`,
          fmt(since(opening) / 1000, 0),
          load(),
        ]);
        console.log(`bench-exec-node: ${curve.at(-1)!.join(" | ")}`);
        if (idle.length < step) break;
      }
      printTable(curve);
      if (firstError.length) console.log(`first errors: ${firstError.join("; ")}`);
      // Each shell exits by itself: a closed WebSocket would make the gateway end every shell with a
      // second exec (its reaper), thousands at once, each needing descriptors in the shim.
      for (const c of idle) c.type("exit\n");
      await Promise.all(idle.map((c) => c.closed));
      await gateway.stop();
    }
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await node?.stop().catch((error: unknown) => console.error(`node stop: ${String(error)}`));
    await controlPlane.stop();
    rmSync(work, { recursive: true, force: true });
    // The machine as found.
    if (Number(readFileSync("/proc/sys/kernel/pty/max", "utf8")) !== ptyMax)
      writeFileSync("/proc/sys/kernel/pty/max", String(ptyMax));
  }
}

const fdCount = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const nofileLimit = (pid: number) =>
  Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))![1]);

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => resolve(!!socket.end()));
    socket.on("error", () => resolve(false));
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench:exec-node: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
