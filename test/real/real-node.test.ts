/**
 * Real pods on this machine (issue 21): a real node (testkit/harness/node.ts: kubelet and kube-proxy
 * v1.37.2 from scripts/realcp/kube, containerd and runc and the CNI plugins from Debian) joins a
 * real control plane of its own (no kwok, so every pod lands on the real node; the API server's
 * audit log on), and:
 * - a target pod under Pod Security `restricted` (non-root, read-only root, no capabilities,
 *   RuntimeDefault seccomp) is Running and Ready through the kubelet, its container in containerd,
 *   its process a real one of uid 1000 in the node's cgroup root, its IP on the node's bridge;
 * - a ClusterIP Service works through kube-proxy's rules (a pod fetches another pod's page through
 *   the Service IP), and pods reach the API server through the `kubernetes` Service;
 * - the exec gateway's `kubernetes` backend and authorizer (in this process, as its own
 *   ServiceAccount, as the kubernetes-authorizer suite runs them) reach a real shell in the pod
 *   through the API server and the kubelet: echo, resize (`stty size` follows), exit code, pipe
 *   mode, a client that vanishes leaves no shell behind; a user allowed in one namespace is
 *   denied in another with no exec request in the audit log;
 * - debug containers on a distroless target (the pause image) are really added and started;
 * - the exec gateway AS A POD, as the chart renders it (`helm install` of ci/exec-gateway-kubernetes.yaml,
 *   its image built from gateway/Dockerfile with podman and imported into containerd), and the real
 *   CLI, run IN THE NODE'S NETWORK NAMESPACE (nsenter; the gateway's Service ClusterIP works there,
 *   through kube-proxy): `entryway enter` on a terminal (tmux) with echo, resize and the exit code,
 *   the gateway's own namespace refused, pipe mode, and `entryway cp` both ways;
 * - through that pod: 20 MiB in pipe mode identical (sha256); a run of multi-byte characters
 *   longer than several frames, every output frame valid UTF-8; the web terminal in Chromium (the
 *   page from the pod, a token, a deep link, output, the exit code); kill -9 of the CLI leaves no
 *   process of the session in the target;
 * - the gateway's pod deleted during a session: the CLI gets the gateway's CLOSE (one line, exit
 *   75), the shell in the target is gone within the reaper's bound, the next session works on the
 *   Deployment's new pod;
 * - the control for both reaper checks: the gateway's process killed (no reaper) leaves the shell;
 * - the chart's SSH workspace runs as the StatefulSet it renders, from its own image built here, and
 *   `ssh <alias>` with the block `entryway ssh-config` writes reaches its pod's sshd through
 *   `entryway connect-proxy` and the Istio gateway model (test/ssh/istio-gateway-model.ts) pointed at
 *   its Service; 4 MiB each way identical; its home and host key survive the pod's deletion.
 * The project's images are built once per change of their sources (testkit/harness/project-images.ts:
 * the archives are kept in the image cache). When the node cannot start here, the suite fails
 * naming what refused (never a skip under CI). The fixtures live in the harness: the chart on the
 * node, each costly step made once on first use (testkit/harness/node-chart.ts), the CLI in the node's
 * network namespace and the sessions it leaves in a target (node-cli.ts), the machine as found
 * after the node's stop (node-host.ts).
 */
import { isUtf8 } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppsV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBUG_RULE, EXEC_RULES, REVIEW_RULES } from "../../components/exec-gateway";
import { defaultConfig } from "../../gateway/src/config";
import type { Gateway } from "../../gateway/src/server";
import { ExitCode } from "../../gateway/src/cli/enter-options";
import { ResponseType } from "../../gateway/src/protocol";
import { cleanEnv, writeCliShim } from "../../testkit/gateway/cli-harness";
import { EntryClient } from "../../testkit/gateway/client";
import { CHROMIUM, launchChromium, screenText, typeLine, waitForText } from "../../testkit/gateway/browser";
import { startControlPlane, type ControlPlane } from "../../testkit/harness/control-plane";
import { repoRoot } from "../../testkit/harness/helm";
import { grantRole, POD_EXEC_RULE, serviceAccountToken, tokenKubeConfig } from "../../testkit/harness/kube-users";
import { kubernetesGateway } from "../../testkit/harness/kubernetes-gateway";
import { startNode, type RealNode } from "../../testkit/harness/node";
import { nodeChart, podIsReady, type NodeChart } from "../../testkit/harness/node-chart";
import { chartImageArgs } from "../../testkit/harness/project-images";
import { nodeCli, targetSessions, type NodeCli, type TargetSessions } from "../../testkit/harness/node-cli";
import { missingNodeTools, nodeLeftovers } from "../../testkit/harness/node-host";
import { BUSYBOX_IMAGE } from "../../testkit/harness/node-images";
import { run, runBytes, sshKeyPair } from "../../testkit/harness/process";
import { distrolessPod, restrictedPod } from "../../testkit/harness/restricted-pod";
import { buildGatewayEnvoy, startGatewayModel } from "../ssh/istio-gateway-model";
import { execAuditEvents, grantGatewayRights } from "./exec-access";

const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());
const missing = missingNodeTools();
if (missing.length && !inCI) process.stderr.write(`real-node: [SKIPPED outside CI: missing ${missing.join(", ")}]\n`);

const GATEWAY_NS = "node-gateway";
/** The chart's exec gateway, as a pod (release `exec`). */
const EXEC_NS = "node-exec";
/** The chart's SSH workspace (release `entryway`, ci/ssh-one-workspace.yaml): alice's. */
const WORKSPACE_NS = "node-entryway";
const WORKSPACE_HOST = `entryway-ws-alice.${WORKSPACE_NS}.svc.cluster.local`;
const TEAM_A = "node-team-a";
const TEAM_B = "node-team-b";
const AUDIENCE = defaultConfig.tokenAudiences[0]!;

describe.skipIf(missing.length > 0 && !inCI)("a real node: kubelet and containerd on the real control plane", () => {
  let controlPlane: ControlPlane;
  let node: RealNode;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let rbac: RbacAuthorizationV1Api;
  let gateway: Gateway;
  let url: string;
  const suiteStarted = performance.now();
  /** The issue-21 cases through the gateway pod added last (20 MiB, UTF-8 frames, web terminal, kill -9 and its control): their share of the time. */
  const newCases: { name: string; ms: number }[] = [];

  let chart: NodeChart;
  let cli: NodeCli;
  let target: TargetSessions;
  let cliHome: string;
  const token = (namespace: string, name: string, audiences: string[]) =>
    serviceAccountToken(core, { namespace, name }, audiences);
  /** alice's token in the file the CLI reads. */
  async function aliceTokenFile(): Promise<void> {
    writeFileSync(cli.tokenFile, await token(TEAM_A, "alice", [AUDIENCE]), { mode: 0o600 });
  }
  /** How long the reaper took to end an abandoned session in the checks that the control test controls (ms). */
  const reapedMs: number[] = [];

  beforeAll(async () => {
    if (missing.length) throw new Error(`the real node cannot be tried: missing ${missing.join(", ")}`);
    const started = performance.now();
    controlPlane = await startControlPlane({ auditLog: true, kwok: false });
    const cpReady = performance.now();
    node = await startNode(controlPlane);
    console.log(
      `real-node: control plane ${((cpReady - started) / 1000).toFixed(1)} s, node ${node.name} Ready ${((performance.now() - cpReady) / 1000).toFixed(1)} s`,
    );
    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfig);
    core = admin.makeApiClient(CoreV1Api);
    apps = admin.makeApiClient(AppsV1Api);
    rbac = admin.makeApiClient(RbacAuthorizationV1Api);

    // As the ExecGateway component grants them with debugContainers on.
    await grantGatewayRights(
      { core, rbac },
      { gatewayNamespace: GATEWAY_NS, teamA: TEAM_A, teamB: TEAM_B, reviewRole: "node-exec-gateway-review" },
      [...EXEC_RULES, DEBUG_RULE],
      REVIEW_RULES,
    );
    // alice may exec and add debug containers in team-a; bob may only exec there.
    const [alice, bob] = [
      { namespace: TEAM_A, name: "alice" },
      { namespace: TEAM_A, name: "bob" },
    ];
    await grantRole(rbac, TEAM_A, { name: "exec", rules: [POD_EXEC_RULE] }, [alice, bob]);
    await grantRole(rbac, TEAM_A, { name: "debug", rules: [DEBUG_RULE], binding: "alice-debug" }, [alice]);

    const gatewayConfig = tokenKubeConfig(
      controlPlane.server,
      controlPlane.caFile,
      await token(GATEWAY_NS, "exec-gateway", ["https://kubernetes.default.svc.cluster.local"]),
    );
    gateway = kubernetesGateway(gatewayConfig, { settings: { debugImages: [BUSYBOX_IMAGE] } });
    url = `ws://127.0.0.1:${(await gateway.listen()).port}/v1/enter`;
    cliHome = mkdtempSync(path.join(os.tmpdir(), "entryway-node-cli-"));
    cli = nodeCli(node, cliHome);
    target = targetSessions({ core, node, cli }, TEAM_A, "target");
    chart = nodeChart(
      { controlPlane, node, core },
      { execNamespace: EXEC_NS, targetNamespace: TEAM_A, logPrefix: "real-node" },
    );
  }, 600_000);

  afterAll(async () => {
    const stopping = performance.now();
    try {
      await gateway?.shutdown("test over");
      if (core) {
        for (const name of [GATEWAY_NS, TEAM_A, TEAM_B, EXEC_NS])
          await core.deleteNamespace({ name, gracePeriodSeconds: 0 }).catch(() => undefined);
      }
      if (node) {
        const times = await node.stop();
        console.log(
          `real-node: node stop ${Object.entries(times)
            .map(([step, ms]) => `${step} ${ms} ms`)
            .join(", ")}`,
        );
        // The machine as found: no namespace, cgroup, mount or process of the node is left.
        expect(nodeLeftovers(node)).toEqual([]);
      }
    } finally {
      if (cliHome) rmSync(cliHome, { recursive: true, force: true });
      await controlPlane?.stop();
      const suite = performance.now() - suiteStarted;
      const added = newCases.reduce((sum, c) => sum + c.ms, 0);
      console.log(
        `real-node: teardown ${((performance.now() - stopping) / 1000).toFixed(1)} s; suite ${(suite / 1000).toFixed(1)} s, of which the new gateway-pod cases ${(added / 1000).toFixed(1)} s (${newCases.map((c) => `${c.name} ${(c.ms / 1000).toFixed(1)} s`).join(", ")})`,
      );
    }
  }, 180_000);

  it("a restricted target pod is Running and Ready through the kubelet: its container in containerd, a real process of uid 1000, an IP on the node's bridge", async () => {
    await core.createNamespacedPod({
      namespace: TEAM_A,
      body: restrictedPod("target", ["sh", "-c", "touch /tmp/ready && exec sleep 86400"]),
    });
    const pod = await chart.podReady(TEAM_A, "target");
    expect(pod.status?.phase).toBe("Running");
    expect(pod.spec?.nodeName).toBe(node.name);
    expect(pod.status?.podIP).toMatch(new RegExp(`^${node.podCidr.split(".").slice(0, 3).join("\\.")}\\.`));
    const containerId = pod.status!.containerStatuses![0]!.containerID!.replace("containerd://", "");
    const tasks = await node.ctr("tasks", "ls");
    const line = tasks.split("\n").find((l) => l.startsWith(containerId));
    expect(line, tasks).toMatch(/RUNNING/);
    const pid = Number(line!.trim().split(/\s+/)[1]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toEqual(["sleep", "86400", ""]);
    // Its cgroup is under the node's cgroup root (kubepods, the QoS class, the pod).
    expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toMatch(new RegExp(`:pids:/entryway-node-\\d+/kubepods/`));
  });

  it("a ClusterIP Service works through kube-proxy, and pods reach the API server through the kubernetes Service", async () => {
    await core.createNamespacedPod({
      namespace: TEAM_A,
      body: restrictedPod("web", [
        "sh",
        "-c",
        "mkdir -p /tmp/www && echo hello-through-a-service > /tmp/www/index.html && touch /tmp/ready && exec httpd -f -p 8080 -h /tmp/www",
      ]),
    });
    await core.createNamespacedService({
      namespace: TEAM_A,
      body: { metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    await chart.podReady(TEAM_A, "web");
    const service = await core.readNamespacedService({ namespace: TEAM_A, name: "web" });
    const clusterIp = service.spec!.clusterIP!;
    // A client pod fetches the page through the Service IP (kube-proxy's DNAT in the node), and
    // opens a TCP connection to the API server through 10.96.0.1:443; kube-proxy may take a moment
    // to write a new Service's rules, so each is tried for up to 20 s.
    await core.createNamespacedPod({
      namespace: TEAM_A,
      body: restrictedPod("client", ["sh", "-c", "touch /tmp/ready && exec sleep 86400"]),
    });
    await chart.podReady(TEAM_A, "client");
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const inClient = async (script: string) => {
      const client = await EntryClient.connect(
        `${url}?namespace=${TEAM_A}&pod=client&tty=false&command=sh&command=-c&command=${encodeURIComponent(script)}`,
        { token: alice },
      );
      const closed = await client.closed;
      return { ...closed, out: client.text, err: client.errorOutput.toString() };
    };
    const retry = (command: string) => `for i in $(seq 20); do ${command} && exit 0; sleep 1; done; exit 1`;
    // HTTP by hand with nc: Debian's busybox-static wget crashes (SIGSEGV) even on an IP address.
    const page = await inClient(
      retry(`printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${clusterIp} 80 | grep -x hello-through-a-service`),
    );
    expect(page, `\n--- kube-proxy\n${node.tail("kube-proxy")}`).toMatchObject({
      exitCode: 0,
      out: "hello-through-a-service\n",
    });
    const api = await inClient(retry("nc -w 2 10.96.0.1 443 </dev/null"));
    expect(api).toMatchObject({ exitCode: 0 });
  });

  it("the exec gateway's kubernetes backend reaches a real shell through the kubelet: echo, resize, exit code", async () => {
    await chart.podReady(TEAM_A, "target");
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const client = await EntryClient.connect(`${url}?namespace=${TEAM_A}&pod=target`, { token: alice });
    client.winch(123, 45);
    client.type("stty size; echo $((6*7)); id -u\n");
    await client.waitFor(/[\r\n]45 123\r\n42\r\n1000\r\n/, 30_000);
    client.winch(100, 30);
    await client.retypeUntil("stty size\n", /[\r\n]30 100\r\n/);
    client.type("echo 'äöü 你好 🙂'\n");
    await client.waitFor(/\r\näöü 你好 🙂\r\n/);
    client.type("exit 3\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 3 });
    expect(
      execAuditEvents(controlPlane.auditLog!, TEAM_A).filter(
        (e) => e.user === `system:serviceaccount:${GATEWAY_NS}:exec-gateway` && e.pod === "target",
      ).length,
    ).toBeGreaterThan(0);
  });

  it("pipe mode through the kubelet: stdin to the command, stdout and stderr apart, 20 MiB of output identical, the exit code", async () => {
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const command = [
      "sh",
      "-c",
      "read a; echo \"got $a\" >&2; dd if=/dev/zero bs=65536 count=320 2>/dev/null | tr '\\0' x; exit 4",
    ];
    const client = await EntryClient.connect(
      `${url}?namespace=${TEAM_A}&pod=target&tty=false&${command.map((c) => `command=${encodeURIComponent(c)}`).join("&")}`,
      { token: alice, keepFrames: false },
    );
    client.type("x\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 4 });
    expect(client.errorOutput.toString()).toBe("got x\n");
    expect(client.outputBytes).toBe(20 * 1024 * 1024);
    expect(client.output.equals(Buffer.alloc(20 * 1024 * 1024, "x"))).toBe(true);
  });

  it("a client that vanishes leaves no shell behind in the target (the gateway's reaper, through a second real exec)", async () => {
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const client = await EntryClient.connect(`${url}?namespace=${TEAM_A}&pod=target`, { token: alice });
    client.type("echo shell-pid=$$\n");
    await client.waitFor(/shell-pid=(\d+)\r\n/, 30_000);
    // The shell's PID in the pod's PID namespace; find it on this machine among the container's
    // processes (NSpid: the last field is the PID inside).
    const inner = Number(/shell-pid=(\d+)\r\n/.exec(client.text)![1]);
    expect(await target.shells(inner)).toHaveLength(1);
    client.ws.terminate();
    await expect
      .poll(() => target.shells(inner), { timeout: defaultConfig.reapTimeoutMs + 10_000, interval: 500 })
      .toHaveLength(0);
  });

  it("access boundary: allowed in team-a, denied in team-b and in the gateway's namespace, with no exec request reaching the API server", async () => {
    await core.createNamespacedPod({
      namespace: TEAM_B,
      body: restrictedPod("target", ["sh", "-c", "touch /tmp/ready && exec sleep 86400"]),
    });
    await chart.podReady(TEAM_B, "target");
    const before =
      execAuditEvents(controlPlane.auditLog!, TEAM_B).length +
      execAuditEvents(controlPlane.auditLog!, GATEWAY_NS).length;
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const denied = await EntryClient.connect(`${url}?namespace=${TEAM_B}&pod=target`, { token: alice });
    expect((await denied.closed).reason).toMatch(/may not exec in namespace node-team-b/);
    const own = await EntryClient.connect(`${url}?namespace=${GATEWAY_NS}&pod=exec-gateway-0`, { token: alice });
    expect((await own.closed).reason).toMatch(/may not exec in namespace node-gateway|not found|refused/);
    expect(
      execAuditEvents(controlPlane.auditLog!, TEAM_B).length +
        execAuditEvents(controlPlane.auditLog!, GATEWAY_NS).length,
    ).toBe(before);
    // The same user still gets a shell in team-a.
    const allowed = await EntryClient.connect(`${url}?namespace=${TEAM_A}&pod=target&tty=false&command=id&command=-u`, {
      token: alice,
    });
    expect(await allowed.closed).toMatchObject({ exitCode: 0 });
    expect(allowed.text).toBe("1000\n");
    void apps;
  });

  it("debug containers on a distroless target: the API server adds the ephemeral container, the kubelet starts it in the target's process namespace; the allow-list and the second review hold", async () => {
    // The target runs the pause image: one static binary, no shell.
    await core.createNamespacedPod({
      namespace: TEAM_A,
      body: distrolessPod("distroless"),
    });
    await chart.podReady(TEAM_A, "distroless");
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const bob = await token(TEAM_A, "bob", [AUDIENCE]);
    const open = (bearer: string, debug?: string) =>
      EntryClient.connect(
        `${url}?namespace=${TEAM_A}&pod=distroless${debug ? `&debug=${encodeURIComponent(debug)}` : ""}`,
        { token: bearer },
      );
    const ephemeral = async () =>
      (await core.readNamespacedPod({ namespace: TEAM_A, name: "distroless" })).spec?.ephemeralContainers ?? [];

    // Control: without the option there is no shell to run (the runtime's own words).
    expect(await (await open(alice)).closed).toMatchObject({ closeCode: "backend-error" });
    // Off the allow-list, and bob (exec allowed, ephemeral containers not): refused, nothing added.
    expect(await (await open(alice, "busybox:latest")).closed).toMatchObject({
      closeCode: "bad-request",
      reason: expect.stringMatching(/is not allowed on this gateway/),
    });
    expect(await (await open(bob, "true")).closed).toMatchObject({
      closeCode: "denied",
      reason: expect.stringMatching(/bob may not add debug containers to pod node-team-a\/distroless/),
    });
    expect(await ephemeral()).toEqual([]);

    const client = await open(alice, "auto");
    client.type("echo in-$((1+1)); cat /proc/1/cmdline; echo; id -u\n");
    // PID 1 of the target's process namespace is the target's /pause (cmdline ends with its NUL).
    await client.waitFor(/in-2\r\n\/pause\0\r\n65535\r\n/, 60_000);
    client.type("exit 0\n");
    expect(await client.closed).toMatchObject({ exitCode: 0 });
    const added = await ephemeral();
    expect(added).toMatchObject([{ image: BUSYBOX_IMAGE, targetContainerName: "app" }]);
    const statuses =
      (await core.readNamespacedPod({ namespace: TEAM_A, name: "distroless" })).status?.ephemeralContainerStatuses ??
      [];
    expect(statuses.find((st) => st.name === added[0]!.name)?.containerID).toMatch(/^containerd:\/\//);
  });

  it("the exec gateway AS A POD (the chart's ci/exec-gateway-kubernetes.yaml, its image built here) and the real `entryway enter` on a terminal: echo, resize (stty size follows), the exit code; its own namespace refused", async () => {
    await chart.podReady(TEAM_A, "target");
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    // Its container runs the image the project's podman build made, as the chart's user.
    const pod = await chart.gatewayPod();
    expect(pod.spec?.nodeName).toBe(node.name);
    expect(pod.status?.containerStatuses?.[0]?.image).toMatch(/^localhost\/entryway-node\/exec-gateway:/);

    // tmux gives the CLI a real terminal of 100x30 (testkit/gateway/cli-harness.ts).
    const tmux = await cli.tmuxEnter(gatewayUrl, `${TEAM_A}/target`);
    try {
      await tmux.type("echo in-$((40+2)); stty size; id -u");
      await tmux.enter();
      await tmux.waitFor(/^in-42\n30 100\n1000$/m, 60_000);
      await tmux.resize(120, 40);
      await tmux.type("stty size");
      await tmux.enter();
      await tmux.waitFor(/^40 120$/m);
      await tmux.type("exit 7");
      await tmux.enter();
      await tmux.waitFor(/^cli-exit=7$/m);
    } finally {
      await tmux.stop();
    }
    // The session went through the pod: its audit record is in the pod's log (stdout).
    const log = await chart.gatewayLog(pod);
    expect(log).toMatch(new RegExp(`"event":"session.start".*"user":"system:serviceaccount:${TEAM_A}:alice"`));

    // The downward API gave the pod its namespace: a target there is refused (one line, exit 77).
    const own = await cli.run(gatewayUrl, ["enter", "--insecure", `${EXEC_NS}/${pod.metadata!.name!}`, "--", "true"]);
    expect({ status: own.status, stderr: own.stderr }).toEqual({
      status: ExitCode.denied,
      stderr: `entryway: permission denied: namespace ${EXEC_NS} is the gateway's own\n`,
    });
  }, 900_000);

  it("through the gateway pod: pipe mode (stdin in, stdout out, the exit code) and `entryway cp` into the target and back, identical", async () => {
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    const piped = await cli.run(
      gatewayUrl,
      ["enter", "--insecure", `${TEAM_A}/target`, "--", "sh", "-c", "wc -c; exit 5"],
      "x".repeat(100_000),
    );
    expect({ status: piped.status, stdout: piped.stdout.toString().trim(), stderr: piped.stderr }).toEqual({
      status: 5,
      stdout: "100000",
      stderr: "",
    });

    const local = mkdtempSync(path.join(cliHome, "cp-"));
    const payload = randomBytes(3 * 1024 * 1024);
    writeFileSync(path.join(local, "payload.bin"), payload);
    const up = await cli.run(gatewayUrl, [
      "cp",
      "--insecure",
      path.join(local, "payload.bin"),
      `${TEAM_A}/target:/tmp/payload.bin`,
    ]);
    expect({ status: up.status, stderr: up.stderr }).toEqual({ status: 0, stderr: "" });
    // In the target, read by the target's own tools.
    const sum = await cli.run(gatewayUrl, [
      "enter",
      "--insecure",
      `${TEAM_A}/target`,
      "--",
      "sha256sum",
      "/tmp/payload.bin",
    ]);
    expect(sum.stdout.toString().split(" ")[0]).toBe(createHash("sha256").update(payload).digest("hex"));
    const down = await cli.run(gatewayUrl, [
      "cp",
      "--insecure",
      `${TEAM_A}/target:/tmp/payload.bin`,
      path.join(local, "back.bin"),
    ]);
    expect({ status: down.status, stderr: down.stderr }).toEqual({ status: 0, stderr: "" });
    expect(readFileSync(path.join(local, "back.bin")).equals(payload)).toBe(true);
  }, 900_000);

  it("through the gateway pod: 20 MiB of output in pipe mode, identical (sha256) to what the target wrote", async () => {
    const started = performance.now();
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    // Random bytes written to a file in the target first, their digest taken there by the target's
    // own sha256sum (on stderr, a stream of its own in pipe mode), then the file on stdout.
    const size = 20 * 1024 * 1024;
    const big = await cli.run(gatewayUrl, [
      "enter",
      "--insecure",
      `${TEAM_A}/target`,
      "--",
      "sh",
      "-c",
      `head -c ${size} /dev/urandom > /tmp/big && sha256sum /tmp/big >&2 && cat /tmp/big; status=$?; rm -f /tmp/big; exit $status`,
    ]);
    expect({ status: big.status, bytes: big.stdout.length }, big.stderr).toEqual({ status: 0, bytes: size });
    expect(createHash("sha256").update(big.stdout).digest("hex")).toBe(big.stderr.split(" ")[0]);
    newCases.push({ name: "20 MiB", ms: performance.now() - started });
  }, 300_000);

  it("through the gateway pod: a run of multi-byte characters (é€😀, 2, 3 and 4 bytes) longer than several frames arrives whole, every output frame valid UTF-8 on its own", async () => {
    const started = performance.now();
    const port = await chart.gatewayForward();
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    // A frame-level client (the CLI writes bytes as they come and could not tell a split character).
    const client = await EntryClient.connect(`ws://127.0.0.1:${port}/v1/enter?namespace=${TEAM_A}&pod=target`, {
      token: alice,
    });
    // 2^14 groups of 9 bytes: 144 KiB, past the gateway's output frames (outputFrameBytes, 32 KiB).
    const run = "é€😀".repeat(2 ** 14);
    client.type(`${utf8Run(14)}; exit 0\n`);
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 0 });
    expect(client.text).toContain(`utf8<${run}>`);
    const frames = client.frames.filter((f) => f.msgType === ResponseType.STDOUT).map((f) => f.content);
    expect(frames.filter((frame) => !isUtf8(frame))).toEqual([]);
    // The run really spans frames: several of them carry part of it.
    expect(frames.filter((frame) => frame.includes("é€😀")).length).toBeGreaterThan(3);
    newCases.push({ name: "UTF-8 frames", ms: performance.now() - started });
  }, 300_000);

  it("the web terminal through the gateway pod, in Chromium: the page from the pod, signed in with a token, a deep link to the target, a typed command's output, a run of multi-byte characters rendered whole, and `exit` ends the session with its code", async () => {
    const started = performance.now();
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is needed for the web terminal (Debian package chromium)`);
    const port = await chart.gatewayForward();
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 640 } });
      await page.goto(`http://127.0.0.1:${port}/?namespace=${TEAM_A}&pod=target`);
      await page.locator("#token").fill(alice);
      await page.getByRole("button", { name: "Sign in" }).click();
      // busybox ash's prompt for a user that is not root.
      await waitForText(page, /\$ $/m, 60_000);
      await typeLine(page, "echo web-$((6*7)); id -u");
      await waitForText(page, /^web-42\n1000$/m);
      // 2^12 groups: 36 KiB, more than one frame; xterm.js wraps it over rows, so the rows are joined.
      await typeLine(page, utf8Run(12));
      await expect
        .poll(async () => (await screenText(page)).replace(/\n/g, "").includes(`utf8<${"é€😀".repeat(2 ** 12)}>`), {
          timeout: 45_000,
        })
        .toBe(true);
      expect(await screenText(page)).not.toContain("\uFFFD");
      await typeLine(page, "exit 3");
      await expect
        .poll(() => page.evaluate(() => (globalThis as unknown as { entryway: { ended: unknown } }).entryway.ended), {
          timeout: 30_000,
        })
        .toMatchObject({ exitCode: 3, closeCode: "exit" });
    } finally {
      await browser.close();
    }
    // The session went through the pod (its audit record on the pod's stdout), opened by the browser.
    const pod = await chart.gatewayPod();
    const log = await chart.gatewayLog(pod);
    expect(log).toMatch(
      new RegExp(`"event":"session.end".*"user":"system:serviceaccount:${TEAM_A}:alice".*"exitCode":3`),
    );
    newCases.push({ name: "web terminal", ms: performance.now() - started });
  }, 300_000);

  it("kill -9 of the CLI during a session (a command running in its shell): no process of the session is left in the target within the reaper's bound, the gateway's reaper named in its log", async () => {
    const started = performance.now();
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    const { tmux, inner } = await target.busy(gatewayUrl);
    try {
      process.kill(await tmux.foregroundPid(), "SIGKILL");
      const killed = performance.now();
      await expect.poll(target.processes, { timeout: defaultConfig.reapTimeoutMs + 5_000, interval: 250 }).toEqual([]);
      reapedMs.push(performance.now() - killed);
      await tmux.waitFor(/^cli-exit=137$/m);
    } finally {
      await tmux.stop();
    }
    // The gateway's reaper ended it: the pod's log names the shell by its PID inside the pod.
    const pod = await chart.gatewayPod();
    const log = await chart.gatewayLog(pod);
    expect(log).toMatch(new RegExp(`"msg":"ended abandoned shell".*"pid":${inner},"result":"(hangup|killed)"`));
    console.log(
      `real-node: CLI killed; the session's processes gone from the target ${(reapedMs.at(-1)! / 1000).toFixed(1)} s later`,
    );
    newCases.push({ name: "kill -9", ms: performance.now() - started });
  }, 300_000);

  it("deleting the exec gateway's pod during a session: the CLI gets the gateway's CLOSE (one line, exit 75), the shell in the target is gone within the reaper's bound, the next session works on the new pod", async () => {
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    const old = await chart.gatewayPod();
    const tmux = await cli.tmuxEnter(gatewayUrl, `${TEAM_A}/target`);
    let inner: number;
    try {
      await tmux.type("echo shell-pid=$$");
      await tmux.enter();
      inner = Number((await tmux.waitFor(/^shell-pid=(\d+)$/m, 60_000))[1]);
      expect(await target.shells(inner)).toHaveLength(1);
      // A plain delete: the API server sets the pod's deletionGracePeriodSeconds from its
      // terminationGracePeriodSeconds (30 s), and the kubelet's killContainer
      // (pkg/kubelet/kuberuntime/kuberuntime_container.go) takes that grace period and calls the
      // runtime's StopContainer with it: SIGTERM, SIGKILL only when it runs out. `entryway serve`
      // drains on SIGTERM (gateway/src/cli/serve.ts): each session ends with CLOSE `shutdown`
      // and its shell is reaped through a second exec while the pod still runs.
      const deleted = performance.now();
      await core.deleteNamespacedPod({ namespace: EXEC_NS, name: old.metadata!.name! });
      await tmux.waitFor(/^cli-exit=\d+$/m, 60_000);
      const screen = await tmux.screen();
      expect(screen).toMatch(new RegExp(`^cli-exit=${ExitCode.ended}$`, "m"));
      expect(screen.split("\n").filter((line) => line.startsWith("entryway:"))).toEqual([
        "entryway: the gateway is shutting down",
      ]);
      await expect
        .poll(() => target.shells(inner), { timeout: defaultConfig.reapTimeoutMs + 5_000, interval: 250 })
        .toHaveLength(0);
      reapedMs.push(performance.now() - deleted);
      console.log(
        `real-node: gateway pod deleted; the CLI told and the shell gone ${(reapedMs.at(-1)! / 1000).toFixed(1)} s later`,
      );
    } finally {
      await tmux.stop();
    }

    // The Deployment's new pod; a session through the Service reaches it once kube-proxy has its
    // endpoint (retried while the CLI cannot connect, exit 69).
    const fresh = await chart.gatewayPod(old.metadata!.name!);
    let next = await cli.run(gatewayUrl, ["enter", "--insecure", `${TEAM_A}/target`, "--", "id", "-u"]);
    for (let attempt = 0; next.status === ExitCode.network && attempt < 30; attempt++) {
      await new Promise((r) => setTimeout(r, 1000));
      next = await cli.run(gatewayUrl, ["enter", "--insecure", `${TEAM_A}/target`, "--", "id", "-u"]);
    }
    expect({ status: next.status, stdout: next.stdout.toString(), stderr: next.stderr }).toEqual({
      status: 0,
      stdout: "1000\n",
      stderr: "",
    });
    const log = await chart.gatewayLog(fresh);
    expect(log).toMatch(new RegExp(`"event":"session.start".*"user":"system:serviceaccount:${TEAM_A}:alice"`));
  }, 900_000);

  it("control for the two checks above (kill -9 of the CLI, the gateway pod deleted): the gateway's process killed (SIGKILL: no drain, no reaper) during the same kind of session leaves the shell and its command in the target for twice as long as the checks took", async () => {
    const started = performance.now();
    expect(reapedMs, "the checks this one controls ran first").toHaveLength(2);
    const gatewayUrl = await chart.execGateway();
    await aliceTokenFile();
    const pod = await chart.gatewayPod();
    const { tmux, inner } = await target.busy(gatewayUrl);
    // Twice as long as the slower check needed, at least 5 s, at most the checks' own bound: the
    // connections close as the CLI's did, and nothing else in the path ends the shell (closing an
    // exec's stream does not: kubernetes/kubernetes#89031), so the checks measure the reaper.
    const wait = Math.min(defaultConfig.reapTimeoutMs + 5_000, Math.max(5_000, 2 * Math.max(...reapedMs)));
    try {
      const container = pod
        .status!.containerStatuses!.find((c) => c.name === "gateway")!
        .containerID!.replace("containerd://", "");
      await node.ctr("tasks", "kill", "--signal", "SIGKILL", container);
      // The CLI tells of the lost connection (exit 69) and does not hang.
      await tmux.waitFor(new RegExp(`^cli-exit=${ExitCode.network}$`, "m"), 60_000);
      await new Promise((r) => setTimeout(r, wait));
      const lingering = await target.processes();
      expect(lingering.map((p) => p.cmdline)).toContain("sleep 600");
      expect(lingering.map((p) => p.inner)).toContain(inner);
      console.log(
        `real-node: control: gateway killed; the shell and its command still in the target ${(wait / 1000).toFixed(1)} s later`,
      );
    } finally {
      await tmux.stop();
      // What the control left in the target goes (the gateway's container restarts on its own).
      for (const p of await target.processes()) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
    }
    await expect.poll(target.processes, { timeout: 10_000, interval: 250 }).toEqual([]);
    newCases.push({ name: "control", ms: performance.now() - started });
  }, 300_000);

  it("the chart's SSH workspace (ci/ssh-one-workspace.yaml) runs as the StatefulSet it renders: Running and Ready with its home on a volume; the CONNECT gateway's proxy (image: auto, injected by Istio) is the expected exception", async () => {
    // The workspace image from its Dockerfile with podman, as test/images builds it, into containerd.
    const { workspace: image } = await chart.images();
    await chart.upstreamCrds();
    // The home: a hostPath volume under the node's folder for the StatefulSet's claim.
    await chart.hostPathVolume("node-workspace-home");
    // The user's key: the test's own (the scenario's is alice's, whose private half is not here);
    // a values file, since a list is replaced whole.
    await sshKeyPair(path.join(cliHome, "id_ed25519"), "node-test");
    const keyValues = path.join(cliHome, "workspace-key.yaml");
    writeFileSync(
      keyValues,
      JSON.stringify({
        workspaces: [
          { name: "alice", authorizedKeys: [readFileSync(path.join(cliHome, "id_ed25519.pub"), "utf8").trim()] },
        ],
      }),
    );
    await chart.install("entryway", WORKSPACE_NS, [
      "-f",
      path.join(repoRoot, "charts", "entryway", "ci", "ssh-one-workspace.yaml"),
      "-f",
      keyValues,
      "--set",
      "connectGateway.serviceType=NodePort",
      ...chartImageArgs("workspaceDefaults", image),
    ]);
    const pods = await chart.statefulPodsReady("entryway");
    const notReady = pods.filter((p) => !podIsReady(p));
    // The CONNECT gateway's pod has `image: auto`: only Istio's injection makes it runnable.
    expect(notReady.map((p) => p.spec?.containers.map((c) => c.image))).toEqual(notReady.map(() => ["auto"]));
    const claims = (await core.listPersistentVolumeClaimForAllNamespaces()).items.filter(
      (c) =>
        c.metadata?.labels?.["app.kubernetes.io/instance"] === "entryway" ||
        c.spec?.volumeName === "node-workspace-home",
    );
    expect(claims.map((c) => c.status?.phase)).toContain("Bound");
  }, 900_000);

  it("ssh <alias> with the block `entryway ssh-config` writes reaches the workspace POD's sshd through `entryway connect-proxy` and the chart's CONNECT gateway as istiod would program Envoy (the model), pointed at the workspace's Service; 4 MiB each way identical; the home (and the host key on it) survives the pod's deletion", async () => {
    // The objects the release applied, as istiod would read them.
    const objects = await chart.manifest("entryway", WORKSPACE_NS);
    const envoy = buildGatewayEnvoy({ objects, gatewayName: "entryway-connect-gateway" });
    expect(envoy.rejected).toBeUndefined();
    const cluster = `outbound|22||${WORKSPACE_HOST}`;
    expect([...envoy.clusters]).toContain(cluster);
    // The cluster's endpoint: the workspace Service's ClusterIP, reached in the node's network
    // namespace (there is no Envoy here, so the model's upstream is a loopback port carried there).
    const service = await core.readNamespacedService({ namespace: WORKSPACE_NS, name: "entryway-ws-alice" });
    const relay = await node.forward(service.spec!.clusterIP!, 22);
    const model = await startGatewayModel(envoy, { [cluster]: relay.port });
    try {
      // `entryway` on this machine's PATH (not the node's: connect-proxy dials the model on loopback).
      const bin = path.join(cliHome, "host-bin");
      writeCliShim(bin);
      const env = { ...cleanEnv(cliHome), PATH: `${bin}:${process.env.PATH}` };
      const block = await run(
        "entryway",
        [
          "ssh-config",
          "--gateway",
          `127.0.0.1:${model.port}`,
          "--identity-file",
          path.join(cliHome, "id_ed25519"),
          `alice=${WORKSPACE_HOST}`,
        ],
        { env, cwd: repoRoot },
      );
      expect(block.status, block.stderr).toBe(0);
      expect(block.stdout).toMatch(/^ {2}ProxyCommand entryway connect-proxy /m);
      const knownHosts = path.join(cliHome, "known_hosts");
      const config = path.join(cliHome, "ssh_config");
      const writeConfig = (checking: "accept-new" | "yes") =>
        writeFileSync(
          config,
          `${block.stdout}\nHost *\n  UserKnownHostsFile ${knownHosts}\n  StrictHostKeyChecking ${checking}\n  BatchMode yes\n  ConnectTimeout 20\n`,
        );
      const ssh = (remote: string, input: Buffer | string = "") =>
        runBytes("ssh", ["-F", config, "alice", remote], { env, cwd: repoRoot, input });
      writeConfig("accept-new");
      const hello = await ssh("echo $((6*7)) $(id -un) $HOME");
      expect({ status: hello.status, stdout: hello.stdout.toString(), stderr: hello.stderr }).toMatchObject({
        status: 0,
        stdout: "42 dev /home/dev\n",
      });

      const payload = randomBytes(4 * 1024 * 1024);
      const digest = createHash("sha256").update(payload).digest("hex");
      const up = await ssh("cat > ~/payload.bin && sha256sum ~/payload.bin", payload);
      expect({ status: up.status, stdout: up.stdout.toString().split(" ")[0] }).toEqual({ status: 0, stdout: digest });
      const down = await ssh("cat ~/payload.bin");
      expect(down.status).toBe(0);
      expect(down.stdout.equals(payload)).toBe(true);

      // The pod goes; the StatefulSet makes it again on the same claim. The host key learned above
      // must still be the workspace's (StrictHostKeyChecking yes): it lives on the home volume.
      const before = await core.readNamespacedPod({ namespace: WORKSPACE_NS, name: "entryway-ws-alice-0" });
      await core.deleteNamespacedPod({ namespace: WORKSPACE_NS, name: "entryway-ws-alice-0" });
      await chart.podReplaced(before);
      writeConfig("yes");
      // kube-proxy may take a moment to have the new pod's endpoint.
      let again = await ssh("sha256sum ~/payload.bin");
      for (
        let attempt = 0;
        again.status === 255 &&
        !/Host key verification failed|REMOTE HOST IDENTIFICATION/.test(again.stderr) &&
        attempt < 20;
        attempt++
      ) {
        await new Promise((r) => setTimeout(r, 1000));
        again = await ssh("sha256sum ~/payload.bin");
      }
      expect({
        status: again.status,
        stdout: again.stdout.toString().split(" ")[0],
        stderr: again.stderr,
      }).toMatchObject({ status: 0, stdout: digest });
      expect(model.log.filter((d) => d.authority === `${WORKSPACE_HOST}:22`).every((d) => d.status === 200)).toBe(true);
    } finally {
      await model.close();
      await relay.close();
    }
  }, 600_000);
});

/** Shell code printing "utf8<" + 2^doublings groups of "é€😀" + ">" (built by doubling in the target's sh). */
function utf8Run(doublings: number): string {
  return `s='é€😀'; for i in $(seq ${doublings}); do s=$s$s; done; printf 'utf8<%s>\\n' "$s"`;
}
