/**
 * An environment brought up with `pulumi up` onto the real node, then used as people use it
 * (issue 31). Every part is a real one (testkit/harness/environment.ts): the control plane and the
 * kubelet, CoreDNS, kube-network-policies dropping packets, istiod injecting and programming a
 * real Istio gateway pod (pilot-agent and upstream Envoy), the real Pulumi engine and Kubernetes
 * provider running the repository's own program (index.ts) on a stack config for this node.
 *
 * The stack: the exec gateway, the CONNECT gateway (on its node port: no load balancer here), and
 * three workspaces in two namespaces. AnsibleForms is left out: its images cannot be had here
 * (no registry); its objects stay covered by the API server tests (test/real/pulumi-stacks.test.ts).
 *
 * Each step prints how long it took; the figures the issue asks for are printed as `environment:`
 * lines.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { AppsV1Api, KubeConfig, NetworkingV1Api, RbacAuthorizationV1Api, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, writeCliShim } from "../../testkit/gateway/cli-harness";
import { selfSignedCertificate } from "../../testkit/gateway/tls";
import { ExitCode } from "../../gateway/src/cli/enter-options";
import { startEnvironment, type Environment } from "../../testkit/harness/environment";
import { repoRoot } from "../../testkit/harness/helm";
import { missingNodeTools } from "../../testkit/harness/node-host";
import { run, runBytes, sshKeyPair } from "../../testkit/harness/process";
import { engineTools, PulumiStack, type EngineResult } from "../../testkit/harness/pulumi-engine";
import { ISTIO_NAMESPACE } from "../../testkit/harness/istio-mesh";
import { connectStatus } from "../../testkit/harness/connect-client";
import { envoyTimeouts } from "../../testkit/harness/envoy-config-dump";
import { grantRole, POD_EXEC_RULE, serviceAccountToken } from "../../testkit/harness/kube-users";
import { probeLike } from "../../testkit/harness/probe-pods";
import { rolledOut } from "../../testkit/harness/rollout";
import { DEBUG_RULE } from "../../components/exec-gateway";
import { distrolessPod } from "../../testkit/harness/restricted-pod";
import { BUSYBOX_IMAGE } from "../../testkit/harness/node-images";
import { tcpProbeScript, tcpVerdict, type TcpVerdict } from "../../testkit/harness/tcp-probe";
import { stackConfig, type StackDocument } from "../../testkit/harness/stack-config";

const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());
const missing = missingNodeTools();
if (missing.length && !inCI) process.stderr.write(`environment: [SKIPPED outside CI: missing ${missing.join(", ")}]\n`);

const STACK_NS = "env-entryway";
const CONNECT_NS = `${STACK_NS}-connect`;
const TEAM_A = "env-team-a";
const TEAM_B = "env-team-b";
const NODE_PORT = 30222;
const GATEWAY_HOST = "ssh.environment.test";
const TLS_SECRET = "connect-gateway-tls";
const NSS_WRAPPER = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so";
const STREAM_CHUNK = 64 * 1024;
/** A workspace's `Host` alias in the stack's ssh config output (sshAlias's default). */
const alias = (name: string) => `entryway-ws-${name}`;
/** The in-cluster name of a workspace's Service (the stack's base name is the default, `entryway`). */
const workspaceHost = (name: string, namespace: string) => `entryway-ws-${name}.${namespace}.svc.cluster.local`;

function figure(text: string): void {
  console.log(`environment: ${text}`);
}

describe.skipIf(missing.length > 0 && !inCI)(
  "an environment brought up with pulumi up on the real node, then used",
  () => {
    let env: Environment;
    /** alice's idle session, opened early and checked late. */
    let idle: { session: ChildProcessWithoutNullStreams; started: number; stdout: string; stderr: string } | undefined;
    let stack: PulumiStack;
    let networking: NetworkingV1Api;
    let rbac: RbacAuthorizationV1Api;
    let apps: AppsV1Api;
    let home: string;
    const upTimes: Record<string, number> = {};

    /** The stack config: workspaces `names` (name, namespace, extra settings). */
    /** Exec gateway settings of the environment (the upgrade step changes one). */
    let execSettings: Record<string, unknown> = {};

    function environmentStack(workspaces: Record<string, unknown>[], tls = false): StackDocument {
      const key = readFileSync(path.join(home, "id_ed25519.pub"), "utf8").trim();
      return {
        namespace: STACK_NS,
        // Made before the stack, with SeaweedFS's credentials Secret in it (the platform's part).
        createNamespace: false,
        execGateway: {
          image: {
            registry: env.images.gateway.registry,
            repository: env.images.gateway.repository,
            tag: env.images.gateway.tag,
          },
          replicas: 1,
          targetNamespaces: [TEAM_A, TEAM_B],
          // The platform's ingress (istio-system) and this machine, where the test's CLI runs.
          allowFrom: [
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ISTIO_NAMESPACE } } },
            { ipBlock: { cidr: `${env.node.hostIp}/32` } },
          ],
          resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "256Mi" } },
          settings: { reviewerGroups: [`system:serviceaccounts:${TEAM_A}`], ...execSettings },
          recordings: {
            s3: {
              bucket: env.s3.bucket,
              endpoint: env.s3.endpoint,
              forcePathStyle: true,
              credentialsSecret: env.s3.credentialsSecret,
            },
          },
          caBundle: env.s3.caPem,
          debugContainers: { images: [BUSYBOX_IMAGE] },
        },
        // The CONNECT port is the node port's number too, so that the name users reach the gateway by
        // (mapped to the node's address for the test's clients, as a load balancer's DNS name would
        // be) and the port of the stack's own ssh config output reach it unchanged.
        connectGateway: {
          hostname: GATEWAY_HOST,
          serviceType: "NodePort",
          port: NODE_PORT,
          nodePort: NODE_PORT,
          // The proxy image is preloaded: there is no registry to pull it from.
          imagePullPolicy: "IfNotPresent",
          // Only this machine's address on the node's link may CONNECT (the allowedSourceRanges step
          // tries another address of this machine's).
          allowedSourceRanges: [`${env.node.hostIp}/32`],
          ...(tls ? { tls: { credentialName: TLS_SECRET } } : {}),
          replicas: 1,
          resources: { requests: { cpu: "10m", memory: "64Mi" }, limits: { memory: "512Mi" } },
        },
        workspaceDefaults: {
          image: {
            registry: env.images.workspace.registry,
            repository: env.images.workspace.repository,
            tag: env.images.workspace.tag,
          },
        },
        workspaces: workspaces.map((ws) => ({
          authorizedKeys: [key],
          storage: { size: "1Gi" },
          resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "256Mi" } },
          ...ws,
        })),
      };
    }

    const WORKSPACES = [
      { name: "alice", namespace: TEAM_A },
      { name: "bob", namespace: TEAM_A, idleTimeout: "20s" },
      { name: "carol", namespace: TEAM_B },
    ];
    /** The workspace the no-drain step adds. */
    const DAVE = { name: "dave", namespace: TEAM_B };
    const EVERY_WORKSPACE = [...WORKSPACES, DAVE];

    async function up(name: string, config: StackDocument): Promise<EngineResult> {
      stack.setConfig(stackConfig(config));
      const started = performance.now();
      const result = await stack.expect("up");
      upTimes[name] = (performance.now() - started) / 1000;
      figure(`pulumi up (${name}): ${upTimes[name].toFixed(1)} s`);
      return result;
    }

    /** The user's ~/.ssh/config: the blocks the stack's `sshConfig` output holds, and the user's own defaults. */
    function writeSshConfig(blocks: string): void {
      writeFileSync(
        path.join(home, "ssh_config"),
        `${blocks}\nHost *\n  IdentityFile ${path.join(home, "id_ed25519")}\n  UserKnownHostsFile ${path.join(home, "known_hosts")}\n  StrictHostKeyChecking accept-new\n  BatchMode yes\n  ConnectTimeout 30\n`,
      );
    }

    /** The test's clients resolve the gateway's name to the node (nss_wrapper: a hosts file of their own). */
    function cliEnv(): NodeJS.ProcessEnv {
      return cleanEnv(home, {
        PATH: `${path.join(home, "bin")}:${process.env.PATH}`,
        LD_PRELOAD: NSS_WRAPPER,
        NSS_WRAPPER_HOSTS: path.join(home, "hosts"),
      });
    }

    const ssh = (alias: string, remote: string, input: Buffer | string = "", options: string[] = []) =>
      runBytes("ssh", ["-F", path.join(home, "ssh_config"), ...options, alias, remote], {
        env: cliEnv(),
        cwd: repoRoot,
        input,
      });

    async function pod(namespace: string, labelSelector: string): Promise<V1Pod> {
      return (await env.podsReady(namespace, labelSelector))[0]!;
    }

    beforeAll(async () => {
      home = mkdtempSync(path.join(os.tmpdir(), "entryway-environment-"));
      writeCliShim(path.join(home, "bin"));
      await sshKeyPair(path.join(home, "id_ed25519"), "env");

      // The engine's tools first (realTool remembers them): finding one may wait for its build
      // (spawnSync), and the node's API relay runs in this process, so nothing may block it once
      // the node is up (its kubelet went NotReady and its pods were evicted when something did).
      engineTools();
      env = await startEnvironment(6, [STACK_NS]);
      writeFileSync(path.join(home, "hosts"), `${env.node.ip} ${GATEWAY_HOST}\n`);
      figure(`cluster up: ${JSON.stringify(env.timings)}`);
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(env.controlPlane.kubeconfig);
      networking = kubeConfig.makeApiClient(NetworkingV1Api);
      rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
      apps = kubeConfig.makeApiClient(AppsV1Api);
      // The namespaces the stack enters but does not own exist before it (docs/deploying.md).
      for (const name of [TEAM_A, TEAM_B]) await env.core.createNamespace({ body: { metadata: { name } } });
      stack = new PulumiStack({ stackName: "environment", config: {}, kubeconfig: env.controlPlane.kubeconfig });
    }, 1_800_000);

    afterAll(async () => {
      await stack?.remove();
      await env?.stop();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    it("pulumi up of the environment ends with every workload Ready", async () => {
      const result = await up("environment", environmentStack(WORKSPACES));
      expect(result.ok).toBe(true);
      for (const [namespace, selector] of [
        [STACK_NS, "app.kubernetes.io/name=exec-gateway"],
        [CONNECT_NS, "app.kubernetes.io/name=connect-gateway"],
        [TEAM_A, "app.kubernetes.io/name=ssh-workspace"],
        [TEAM_B, "app.kubernetes.io/name=ssh-workspace"],
      ] as const) {
        const pods = await env.podsReady(namespace, selector, 30_000);
        expect(pods.length).toBeGreaterThan(0);
      }
      // The gateway's proxy is istiod's injection: the image made from pilot-agent and Envoy.
      const gateway = await pod(CONNECT_NS, "app.kubernetes.io/name=connect-gateway");
      expect(gateway.spec?.containers.find((c) => c.name === "istio-proxy")?.image).toMatch(/proxyv2/);
      // The stack's own ssh config output names every workspace.
      const blocks = result.outputs.sshConfig?.value as string;
      for (const ws of WORKSPACES) expect(blocks).toContain(`HostName ${workspaceHost(ws.name, ws.namespace)}`);
      writeSshConfig(blocks);
    });

    it("ssh with the stack's own ssh config, through entryway connect-proxy and the real Istio gateway: 4 MiB each way identical, an undeclared host refused by name, and throughput against ssh straight to the pod", async () => {
      const firstStarted = performance.now();
      let hello = await ssh(alias("alice"), "echo $((6*7)) $(id -un)");
      // istiod may still be pushing the workspace's route to the proxy (its first push after Ready).
      for (let attempt = 0; hello.status !== 0 && attempt < 30; attempt++) {
        await new Promise((r) => setTimeout(r, 1000));
        hello = await ssh(alias("alice"), "echo $((6*7)) $(id -un)");
      }
      expect({ status: hello.status, stdout: hello.stdout.toString(), stderr: hello.stderr }).toMatchObject({
        status: 0,
        stdout: "42 dev\n",
      });
      figure(`first ssh answer after up: ${((performance.now() - firstStarted) / 1000).toFixed(1)} s`);

      const payload = randomBytes(4 * 1024 * 1024);
      const digest = createHash("sha256").update(payload).digest("hex");
      const sent = await ssh(alias("alice"), "cat > ~/payload.bin && sha256sum ~/payload.bin", payload);
      expect({ status: sent.status, sum: sent.stdout.toString().split(" ")[0] }).toEqual({ status: 0, sum: digest });
      const back = await ssh(alias("alice"), "cat ~/payload.bin");
      expect(back.status).toBe(0);
      expect(back.stdout.equals(payload)).toBe(true);

      // A host the gateway does not route: Envoy answers 404, and connect-proxy names it.
      const proxy = await runBytes(
        "entryway",
        ["connect-proxy", `${GATEWAY_HOST}:${NODE_PORT}`, "entryway-ws-mallory.env-team-a.svc.cluster.local", "22"],
        { env: cliEnv(), cwd: repoRoot, input: "" },
      );
      expect(proxy.status).not.toBe(0);
      expect(proxy.stderr).toMatch(/404/);
      expect(proxy.stderr).toContain("entryway-ws-mallory.env-team-a.svc.cluster.local");

      // Throughput: 64 MiB down through the gateway, then straight to the pod's sshd (a policy
      // admitting this machine to its port for the measurement, removed after).
      const alice = await pod(
        TEAM_A,
        "app.kubernetes.io/name=ssh-workspace,app.kubernetes.io/component=entryway-ws-alice",
      );
      const sshdPort = containerPort(alice);
      await ssh(alias("alice"), "head -c 67108864 /dev/zero > ~/big.bin");
      const timedDownload = async (args: string[]): Promise<number> => {
        const started = performance.now();
        const result = await runBytes("ssh", [...args, "cat ~/big.bin"], { env: cliEnv(), cwd: repoRoot });
        expect({ status: result.status, bytes: result.stdout.length, stderr: result.stderr }).toMatchObject({
          status: 0,
          bytes: 64 * 1024 * 1024,
        });
        return 64 / ((performance.now() - started) / 1000);
      };
      await networking.createNamespacedNetworkPolicy({
        namespace: TEAM_A,
        body: {
          metadata: { name: "measure-direct-ssh" },
          spec: {
            podSelector: { matchLabels: { "app.kubernetes.io/component": "entryway-ws-alice" } },
            policyTypes: ["Ingress"],
            ingress: [
              {
                _from: [{ ipBlock: { cidr: `${env.node.hostIp}/32` } }],
                ports: [{ port: sshdPort, protocol: "TCP" }],
              },
            ],
          },
        },
      });
      try {
        const direct = [
          "-F",
          "/dev/null",
          "-i",
          path.join(home, "id_ed25519"),
          "-o",
          `UserKnownHostsFile=${path.join(home, "known_hosts_direct")}`,
          "-o",
          "StrictHostKeyChecking=accept-new",
          "-o",
          "BatchMode=yes",
          "-p",
          String(sshdPort),
          `dev@${alice.status!.podIP!}`,
        ];
        let probe = await runBytes("ssh", [...direct, "true"], { env: cliEnv(), cwd: repoRoot });
        for (let attempt = 0; probe.status !== 0 && attempt < 20; attempt++) {
          await new Promise((r) => setTimeout(r, 1000));
          probe = await runBytes("ssh", [...direct, "true"], { env: cliEnv(), cwd: repoRoot });
        }
        expect(probe.status, probe.stderr).toBe(0);
        const rates: { gateway: number[]; direct: number[] } = { gateway: [], direct: [] };
        for (let pair = 0; pair < 2; pair++) {
          rates.gateway.push(await timedDownload(["-F", path.join(home, "ssh_config"), alias("alice")]));
          rates.direct.push(await timedDownload(direct));
        }
        const best = (values: number[]) => Math.max(...values);
        figure(
          `ssh 64 MiB down: through the real Envoy ${best(rates.gateway).toFixed(1)} MiB/s, straight to the pod ${best(rates.direct).toFixed(1)} MiB/s (ratio ${(best(rates.gateway) / best(rates.direct)).toFixed(2)}; best of 2 alternating pairs)`,
        );
      } finally {
        await networking.deleteNamespacedNetworkPolicy({ namespace: TEAM_A, name: "measure-direct-ssh" });
        await ssh(alias("alice"), "rm -f ~/big.bin");
      }
    });

    it("allowedSourceRanges: the real Envoy refuses CONNECT from an address outside them (403) and admits this machine's", async () => {
      // A second address of this machine's on the node's link, outside the /32 the stack allows;
      // the node answers it by its default route (to this machine's end of the link). Istio judges
      // remoteIpBlocks by the client's address, which a NodePort keeps with externalTrafficPolicy
      // Local (istio.io/latest/docs/tasks/security/authorization/authz-ingress/).
      const outside = env.node.hostIp.replace(/\.1$/, ".5");
      const connectPort = { host: env.node.ip, port: NODE_PORT };
      const aliceSshd = `${workspaceHost("alice", TEAM_A)}:22`;
      const added = await run("ip", ["addr", "add", `${outside}/32`, "dev", env.node.hostLink]);
      if (added.status !== 0) throw new Error(`ip addr add ${outside}: ${added.stderr}`);
      try {
        const refused = await connectStatus(connectPort, aliceSshd, outside);
        const admitted = await connectStatus(connectPort, aliceSshd, env.node.hostIp);
        expect({ refused, admitted }).toMatchObject({
          refused: expect.stringMatching(/^HTTP\/1\.1 403 /),
          admitted: expect.stringMatching(/^HTTP\/1\.1 200 /),
        });
        figure(`allowedSourceRanges: ${outside} gets "${refused}", ${env.node.hostIp} gets "${admitted}"`);
      } finally {
        await run("ip", ["addr", "delete", `${outside}/32`, "dev", env.node.hostLink]);
      }
    });

    it("an idle session is opened (checked past Envoy's default stream idle timeout, 5 minutes, before TLS changes the listener)", async () => {
      const session = spawn(
        "ssh",
        [
          "-F",
          path.join(home, "ssh_config"),
          "-o",
          "ServerAliveInterval=0",
          alias("alice"),
          "read line; echo got-$line",
        ],
        {
          env: cliEnv(),
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      const opened = { session, started: performance.now(), stdout: "", stderr: "" };
      session.stdout.on("data", (data: Buffer) => (opened.stdout += data.toString()));
      session.stderr.on("data", (data: Buffer) => (opened.stderr += data.toString()));
      idle = opened;
      // Open once the remote shell runs (a command that returns proves the tunnel is up).
      expect((await ssh(alias("alice"), "true")).status).toBe(0);
    });

    it("no drain on add: while an ssh session streams, pulumi up adds a workspace; not a byte of the session is lost and the new workspace answers ssh", async () => {
      const gatewayBefore = await pod(CONNECT_NS, "app.kubernetes.io/name=connect-gateway");
      // A stream of 64 KiB chunks (the payload's head) until a stop file appears.
      await ssh(alias("alice"), "rm -f ~/stop-stream");
      const chunk = (await ssh(alias("alice"), `head -c ${STREAM_CHUNK} ~/payload.bin`)).stdout;
      expect(chunk.length).toBe(STREAM_CHUNK);
      const stream = spawn(
        "ssh",
        [
          "-F",
          path.join(home, "ssh_config"),
          alias("alice"),
          `while [ ! -e ~/stop-stream ]; do head -c ${STREAM_CHUNK} ~/payload.bin; sleep 0.2; done`,
        ],
        { env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] },
      );
      const received: Buffer[] = [];
      stream.stdout.on("data", (data: Buffer) => received.push(data));
      let streamError = "";
      stream.stderr.on("data", (data: Buffer) => (streamError += data.toString()));
      const streamEnded = new Promise<number | null>((resolve) => stream.on("close", (code) => resolve(code)));
      await expect.poll(() => received.reduce((n, b) => n + b.length, 0), { timeout: 30_000 }).toBeGreaterThan(0);

      const added = await up("one more workspace", environmentStack(EVERY_WORKSPACE));
      const upEnded = performance.now();
      writeSshConfig(added.outputs.sshConfig?.value as string);
      let answer = await ssh(alias("dave"), "echo dave-here");
      while (answer.status !== 0 && performance.now() - upEnded < 120_000) {
        await new Promise((r) => setTimeout(r, 250));
        answer = await ssh(alias("dave"), "echo dave-here");
      }
      expect({ status: answer.status, stdout: answer.stdout.toString(), stderr: answer.stderr }).toMatchObject({
        status: 0,
        stdout: "dave-here\n",
      });
      figure(
        `new workspace's first ssh answer: ${((performance.now() - upEnded) / 1000).toFixed(1)} s after pulumi up ended`,
      );

      // The stream was still running through all of it.
      expect(stream.exitCode).toBeNull();
      await ssh(alias("alice"), "touch ~/stop-stream");
      expect(await streamEnded, streamError).toBe(0);
      const all = Buffer.concat(received);
      expect(all.length % STREAM_CHUNK).toBe(0);
      for (let offset = 0; offset < all.length; offset += STREAM_CHUNK)
        expect(all.subarray(offset, offset + STREAM_CHUNK).equals(chunk)).toBe(true);
      figure(`stream during the add: ${(all.length / 1024 / 1024).toFixed(1)} MiB, every chunk identical`);
      // The same gateway pod served it all: nothing restarted or rolled.
      const gatewayAfter = await pod(CONNECT_NS, "app.kubernetes.io/name=connect-gateway");
      expect(gatewayAfter.metadata?.uid).toBe(gatewayBefore.metadata?.uid);
      expect(gatewayAfter.status?.containerStatuses?.map((c) => c.restartCount)).toEqual(
        gatewayBefore.status?.containerStatuses?.map((c) => c.restartCount),
      );
    });

    it("idle: a workspace's idleTimeout (bob: 20 s) closes an idle tunnel at the real Envoy", async () => {
      const started = performance.now();
      const idle = await ssh(alias("bob"), "sleep 120", "", ["-o", "ServerAliveInterval=0"]);
      const seconds = (performance.now() - started) / 1000;
      figure(`bob's idle session closed after ${seconds.toFixed(1)} s (idleTimeout 20s)`);
      expect(idle.status).not.toBe(0);
      expect(seconds).toBeGreaterThan(15);
      expect(seconds).toBeLessThan(100);
    });

    /** The exec gateway's Ready pod's address (this machine reaches pod IPs; its policy admits this machine). */
    async function execGatewayUrl(): Promise<string> {
      const exec = await pod(STACK_NS, "app.kubernetes.io/name=exec-gateway");
      return `ws://${exec.status!.podIP!}:${containerPort(exec)}`;
    }
    function enterEnv(gatewayUrl: string): NodeJS.ProcessEnv {
      return { ...cliEnv(), ENTRYWAY_GATEWAY: gatewayUrl, ENTRYWAY_TOKEN_FILE: path.join(home, "token") };
    }
    /** `entryway enter` into alice's workspace in pipe mode. */
    async function enter(
      gatewayUrl: string,
      command: string[],
    ): Promise<{ status: number | null; stdout: string; stderr: string }> {
      const result = await runBytes(
        "entryway",
        ["enter", "--insecure", `${TEAM_A}/entryway-ws-alice-0`, "--", ...command],
        { env: enterEnv(gatewayUrl), cwd: repoRoot, input: "" },
      );
      return { status: result.status, stdout: result.stdout.toString(), stderr: result.stderr };
    }

    /** A pod's first container's first port. */
    function containerPort(target: V1Pod): number {
      return target.spec!.containers[0]!.ports![0]!.containerPort;
    }

    /** A TCP probe from the probe pod to a pod's or Service's address (testkit/harness/tcp-probe.ts), through the API server's exec. */
    async function verdict(probe: V1Pod, target: { ip: string; port: number }): Promise<TcpVerdict> {
      const result = await env.exec(probe.metadata!.namespace!, probe.metadata!.name!, [
        "sh",
        "-c",
        tcpProbeScript(target.ip, target.port),
      ]);
      return tcpVerdict({ code: result.code, out: result.stdout });
    }

    it("NetworkPolicies with real packets: for each rule, an allowed probe connects and a denied one is dropped; a denied probe connects once its policy is removed", async () => {
      const gateway = await pod(CONNECT_NS, "app.kubernetes.io/name=connect-gateway");
      const alice = await pod(TEAM_A, "app.kubernetes.io/component=entryway-ws-alice");
      const carol = await pod(TEAM_B, "app.kubernetes.io/component=entryway-ws-carol");
      const exec = await pod(STACK_NS, "app.kubernetes.io/name=exec-gateway");
      const execPort = containerPort(exec);
      // sshd's own port in the pod (the Service's 22 maps to it).
      const sshdPort = containerPort(alice);
      type Target = { ip: string; port: number };
      const api: Target = { ip: "10.96.0.1", port: 443 };
      const aliceSshd: Target = { ip: alice.status!.podIP!, port: sshdPort };
      const carolSshd: Target = { ip: carol.status!.podIP!, port: sshdPort };
      const execHttp: Target = { ip: exec.status!.podIP!, port: execPort };

      const [asGateway, asAlice, outsider, fromIngress] = await Promise.all([
        probeLike(env.core, CONNECT_NS, "probe-as-gateway", gateway),
        probeLike(env.core, TEAM_A, "probe-as-alice", alice),
        probeLike(env.core, TEAM_B, "probe-outsider", undefined),
        probeLike(env.core, ISTIO_NAMESPACE, "probe-from-ingress", undefined),
      ]);
      // What, from which probe, to where, and whether the policies allow it.
      const cases: [string, V1Pod, Target, boolean][] = [
        ["connect gateway -> workspace sshd", asGateway, aliceSshd, true],
        ["connect gateway -> exec gateway", asGateway, execHttp, false],
        ["connect gateway -> API server", asGateway, api, false],
        ["workspace -> another workspace", asAlice, carolSshd, false],
        ["workspace -> API server", asAlice, api, false],
        ["another namespace -> exec gateway", outsider, execHttp, false],
        ["another namespace -> workspace sshd", outsider, aliceSshd, false],
        ["ingress namespace -> exec gateway", fromIngress, execHttp, true],
      ];
      // An allowed probe is tried until it connects (kube-network-policies learns a new pod's
      // address from its informer, so a probe pod's first packets may come before it is known).
      const outcomes: string[] = [];
      for (const [what, probe, target, allowed] of cases) {
        let seen = await verdict(probe, target);
        for (const started = Date.now(); allowed && seen !== "connected" && Date.now() - started < 30_000;)
          seen = await verdict(probe, target);
        outcomes.push(`${what}: ${seen}`);
      }
      expect(outcomes).toEqual(cases.map(([what, , , allowed]) => `${what}: ${allowed ? "connected" : "dropped"}`));
      figure(`NetworkPolicy probes: ${cases.length} as expected`);

      // The control: the workspace's own policy removed, the same denied probe connects; then restored.
      const policies = (await networking.listNamespacedNetworkPolicy({ namespace: TEAM_A })).items.filter((p) =>
        JSON.stringify(p.spec?.podSelector).includes("entryway-ws-alice"),
      );
      expect(policies.length).toBeGreaterThan(0);
      for (const policy of policies)
        await networking.deleteNamespacedNetworkPolicy({ namespace: TEAM_A, name: policy.metadata!.name! });
      try {
        await expect.poll(() => verdict(asAlice, api), { timeout: 30_000 }).toBe("connected");
      } finally {
        for (const policy of policies)
          await networking.createNamespacedNetworkPolicy({
            namespace: TEAM_A,
            body: { metadata: { name: policy.metadata!.name!, labels: policy.metadata?.labels }, spec: policy.spec },
          });
      }
      await expect.poll(() => verdict(asAlice, api), { timeout: 30_000 }).toBe("dropped");
    });

    it("the exec gateway: entryway enter through the gateway pod into a workspace, and with --debug into a distroless pod", async () => {
      await env.core.createNamespacedServiceAccount({ namespace: TEAM_A, body: { metadata: { name: "alice" } } });
      await grantRole(
        rbac,
        TEAM_A,
        {
          name: "alice-exec",
          rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }, POD_EXEC_RULE, DEBUG_RULE],
        },
        [{ namespace: TEAM_A, name: "alice" }],
      );
      const aliceToken = await serviceAccountToken(env.core, { namespace: TEAM_A, name: "alice" }, ["entryway"]);
      writeFileSync(path.join(home, "token"), aliceToken, { mode: 0o600 });
      const started = performance.now();
      const entered = await enter(await execGatewayUrl(), ["sh", "-c", "echo inside $(id -un); exit 3"]);
      expect(entered).toEqual({ status: 3, stdout: "inside dev\n", stderr: "" });
      figure(`entryway enter through the gateway pod: ${((performance.now() - started) / 1000).toFixed(1)} s`);

      // The session's recording, in SeaweedFS's bucket: listed for a reviewer and replayed byte for byte.
      const gatewayUrl = await execGatewayUrl();
      const httpUrl = gatewayUrl.replace(/^ws:/, "http:");
      const token = readFileSync(path.join(home, "token"), "utf8");
      let listed: { id: string; target: string; complete: boolean }[] = [];
      await expect
        .poll(
          async () => {
            const answer = await fetch(`${httpUrl}/v1/recordings`, { headers: { authorization: `Bearer ${token}` } });
            listed = ((await answer.json()) as { recordings: typeof listed }).recordings;
            return listed.filter((r) => r.target.includes("entryway-ws-alice-0") && r.complete).length;
          },
          { timeout: 60_000 },
        )
        .toBeGreaterThan(0);
      const recording = listed.find((r) => r.target.includes("entryway-ws-alice-0") && r.complete)!;
      const replayed = await runBytes("entryway", ["replay", "--bytes", "--insecure", recording.id], {
        env: enterEnv(gatewayUrl),
        cwd: repoRoot,
        input: "",
      });
      expect({ status: replayed.status, stderr: replayed.stderr }).toEqual({ status: 0, stderr: "" });
      expect(replayed.stdout.toString()).toContain("inside dev");

      // A pod with no shell at all (the pause image): a debug container from the allow-list.
      await env.core.createNamespacedPod({
        namespace: TEAM_A,
        body: distrolessPod("distroless"),
      });
      await env.podsReady(TEAM_A, "app=distroless");
      const debugged = await runBytes(
        "entryway",
        ["enter", "--insecure", "--debug", `${TEAM_A}/distroless`, "--", "sh", "-c", "echo debug-here"],
        { env: enterEnv(await execGatewayUrl()), cwd: repoRoot, input: "" },
      );
      expect({ status: debugged.status, stdout: debugged.stdout.toString(), stderr: debugged.stderr }).toEqual({
        status: 0,
        stdout: "debug-here\n",
        stderr: "",
      });
    });

    it("upgrade: a gateway setting changed with pulumi up rolls the exec gateway; the live session gets the one-line shutdown message, a new session lands on the new pod", async () => {
      const before = await pod(STACK_NS, "app.kubernetes.io/name=exec-gateway");
      const live = spawn(
        "entryway",
        ["enter", "--insecure", `${TEAM_A}/entryway-ws-alice-0`, "--", "sh", "-c", "echo ready; sleep 600"],
        { env: enterEnv(await execGatewayUrl()), cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] },
      );
      let liveOut = "";
      let liveErr = "";
      live.stdout.on("data", (data: Buffer) => (liveOut += data.toString()));
      live.stderr.on("data", (data: Buffer) => (liveErr += data.toString()));
      const liveEnded = new Promise<number | null>((resolve) => live.on("close", (code) => resolve(code)));
      await expect.poll(() => liveOut, { timeout: 60_000 }).toContain("ready");

      execSettings = { maxSessionSeconds: 7200 };
      await up("exec gateway setting", environmentStack(EVERY_WORKSPACE));
      expect(await liveEnded, liveErr).toBe(ExitCode.ended);
      expect(liveErr).toBe("entryway: the gateway is shutting down\n");
      const after = await env.podsReady(STACK_NS, "app.kubernetes.io/name=exec-gateway");
      expect(after.map((p) => p.metadata?.name)).not.toContain(before.metadata?.name);
      const again = await enter(await execGatewayUrl(), ["hostname"]);
      expect(again.status, again.stderr).toBe(0);
    });

    it("idle: the session opened earlier is still there past Envoy's default stream idle timeout (5 minutes); the timeouts the real Envoy applies, from its config dump", async () => {
      const opened = idle!;
      const waitMs = 310_000 - (performance.now() - opened.started);
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      expect(opened.session.exitCode, opened.stderr).toBeNull();
      opened.session.stdin.write("still\n");
      await expect.poll(() => opened.stdout, { timeout: 30_000 }).toBe("got-still\n");
      figure(`alice's session answered after ${((performance.now() - opened.started) / 1000).toFixed(0)} s idle`);

      const gateway = await pod(CONNECT_NS, "app.kubernetes.io/name=connect-gateway");
      const dump = await env.exec(CONNECT_NS, gateway.metadata!.name!, [
        "pilot-agent",
        "request",
        "GET",
        "config_dump",
      ]);
      expect(dump.code).toBe(0);
      const applied = envoyTimeouts(JSON.parse(dump.stdout), [
        workspaceHost("alice", TEAM_A),
        workspaceHost("bob", TEAM_A),
      ]);
      figure(`Envoy's timeouts: ${JSON.stringify(applied)}`);
      expect(applied.routes).toEqual({
        [workspaceHost("alice", TEAM_A)]: "3600s",
        [workspaceHost("bob", TEAM_A)]: "20s",
      });
    });

    it("TLS on the CONNECT hop: pulumi up turns it on, and ssh goes through the gateway's certificate", async () => {
      const dir = mkdtempSync(path.join(home, "tls-"));
      const { keyPath, certPath } = selfSignedCertificate(dir, GATEWAY_HOST);
      const base64 = (file: string) => readFileSync(file).toString("base64");
      await env.core.createNamespacedSecret({
        namespace: CONNECT_NS,
        body: {
          metadata: { name: TLS_SECRET },
          type: "kubernetes.io/tls",
          data: { "tls.crt": base64(certPath), "tls.key": base64(keyPath) },
        },
      });
      const result = await up("TLS on", environmentStack(EVERY_WORKSPACE, true));
      const upEnded = performance.now();
      await rolledOut(apps, CONNECT_NS, "entryway-connect-gateway");
      const blocks = result.outputs.sshConfig?.value as string;
      expect(blocks).toContain(`ProxyCommand entryway connect-proxy --tls ${GATEWAY_HOST}:${NODE_PORT} %h %p`);
      // The user's CA for a private certificate (ssh-config --ca-file writes the same).
      writeSshConfig(blocks.replaceAll("connect-proxy --tls ", `connect-proxy --tls --ca-file ${certPath} `));
      const payload = randomBytes(1024 * 1024);
      let echoed = await ssh(alias("alice"), "sha256sum", payload);
      while (echoed.status !== 0 && performance.now() - upEnded < 120_000) {
        await new Promise((r) => setTimeout(r, 500));
        echoed = await ssh(alias("alice"), "sha256sum", payload);
      }
      expect({
        status: echoed.status,
        sum: echoed.stdout.toString().split(" ")[0],
        stderr: echoed.stderr,
      }).toMatchObject({
        status: 0,
        sum: createHash("sha256").update(payload).digest("hex"),
      });
      figure(
        `TLS on the CONNECT hop: first ssh answer ${((performance.now() - upEnded) / 1000).toFixed(1)} s after pulumi up ended`,
      );
      // Without the CA, connect-proxy refuses the unknown certificate. Polled: once, in a run at a
      // load of 29, the node port refused the connection right after ssh had passed (kube-proxy
      // rejects while a Service has no Ready endpoint: pkg/proxy/iptables/proxier.go, "has no endpoints").
      const untrusted = () =>
        runBytes(
          "entryway",
          ["connect-proxy", "--tls", `${GATEWAY_HOST}:${NODE_PORT}`, workspaceHost("alice", TEAM_A), "22"],
          {
            env: cliEnv(),
            cwd: repoRoot,
            input: "",
          },
        );
      await expect
        .poll(
          async () => {
            const refused = await untrusted();
            return { failed: refused.status !== 0, stderr: refused.stderr };
          },
          { timeout: 60_000, interval: 1000 },
        )
        .toMatchObject({ failed: true, stderr: expect.stringMatching(/certificate/i) });
    });

    it("pulumi destroy leaves nothing but the volumes StatefulSets keep by design", async () => {
      const started = performance.now();
      await stack.expect("destroy");
      figure(`pulumi destroy: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const claims = (await env.core.listPersistentVolumeClaimForAllNamespaces()).items.map(
        (c) => `${c.metadata!.namespace}/${c.metadata!.name}`,
      );
      figure(`left after destroy: ${claims.join(", ")}`);
      expect(claims.sort()).toEqual(
        EVERY_WORKSPACE.map((ws) => `${ws.namespace}/home-entryway-ws-${ws.name}-0`).sort(),
      );
      for (const namespace of [CONNECT_NS]) {
        const ns = await env.core.readNamespace({ name: namespace }).catch(() => undefined);
        expect(ns === undefined || !!ns.metadata?.deletionTimestamp, namespace).toBe(true);
      }
    });
  },
);
