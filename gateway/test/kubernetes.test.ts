// Kubernetes backend through @kubernetes/client-node against the stand-in in testkit/gateway/kube-standin.ts,
// which STANDS IN FOR THE KUBERNETES API SERVER AND KUBELET: it speaks the pods/exec WebSocket
// (v5.channel.k8s.io and v4.channel.k8s.io) and runs real shells in real PTYs (node-pty) on this machine.
import { readFileSync } from "node:fs";
import { UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { kubernetesAuthorizer } from "../src/auth/kubernetes.js";
import { kubernetesBackend, loadKubeConfig } from "../src/backends/kubernetes.js";
import { defaultConfig } from "../src/config.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { wrapCommand } from "../src/shell.js";
import {
  execBackendCases,
  RAW_FIRST,
  RAW_FIRST_ANSWER,
  rawModeKept,
  runRawFirst,
} from "../../testkit/gateway/exec-cases.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../testkit/gateway/gateway.js";
import {
  replicaSetPod,
  standinUser,
  startKubeStandin,
  statefulSetPod,
  type ExecProtocol,
  type KubeStandin,
  type StandinOptions,
} from "../../testkit/gateway/kube-standin.js";

const fixtures: Omit<StandinOptions, "protocol"> = {
  serviceAccountToken: "gateway-service-account-token",
  pods: [
    statefulSetPod("team-a", "web", 0, ["app", "sidecar"]),
    statefulSetPod("team-a", "web", 1, ["app"]),
    replicaSetPod("team-a", "api-7f9c", "api-7f9c-zzz", ["api"], { app: "api" }, "2026-03-01"),
    replicaSetPod("team-a", "api-7f9c", "api-7f9c-aaa", ["api"], { app: "api" }, "2026-03-02"),
    replicaSetPod("team-a", "api-7f9c", "api-7f9c-pending", ["api"], { app: "api" }, "2026-02-01", {
      phase: "Pending",
    }),
    // Impostors: named like a StatefulSet instance but nobody's; labelled as api's pods (and more) but
    // another Deployment's; older than every real instance, so by labels or names alone they would win.
    { namespace: "team-a", name: "web-5", containers: ["app"], labels: { app: "web" } },
    replicaSetPod("team-a", "api-debug-6c", "api-debug-x", ["api"], { app: "api", debug: "true" }, "2026-01-01"),
    {
      namespace: "team-a",
      name: "api-bare",
      containers: ["api"],
      labels: { app: "api" },
      createdAt: "2026-01-02T00:00:00Z",
    },
    // A Deployment whose selector also has matchExpressions (track In [canary]).
    replicaSetPod(
      "team-a",
      "canary-stable-1a",
      "canary-stable",
      ["app"],
      { app: "canary", track: "stable" },
      "2026-01-01",
    ),
    replicaSetPod("team-a", "canary-5d", "canary-5d-q", ["app"], { app: "canary", track: "canary" }, "2026-03-01"),
    { namespace: "team-b", name: "db-0", containers: ["db"] },
    // The gateway's own pod: its service-account token may exec and review tokens cluster-wide.
    { namespace: "entryway", name: "entryway-exec-gateway-0", containers: ["gateway"] },
    // The CONNECT gateway's pod: its service account reads its TLS key.
    { namespace: "entryway-connect", name: "entryway-connect-gateway-0", containers: ["istio-proxy"] },
  ],
  statefulSets: [{ namespace: "team-a", name: "web" }],
  deployments: [
    { namespace: "team-a", name: "api", matchLabels: { app: "api" } },
    { namespace: "team-a", name: "api-debug", matchLabels: { app: "api", debug: "true" } },
    {
      namespace: "team-a",
      name: "canary",
      matchLabels: { app: "canary" },
      matchExpressions: [{ key: "track", operator: "In", values: ["canary"] }],
    },
    {
      namespace: "team-a",
      name: "canary-stable",
      matchLabels: { app: "canary" },
      matchExpressions: [{ key: "track", operator: "In", values: ["stable"] }],
    },
  ],
  replicaSets: [
    { namespace: "team-a", name: "api-7f9c", deployment: "api", labels: { app: "api" } },
    { namespace: "team-a", name: "api-debug-6c", deployment: "api-debug", labels: { app: "api", debug: "true" } },
    { namespace: "team-a", name: "canary-5d", deployment: "canary", labels: { app: "canary", track: "canary" } },
    {
      namespace: "team-a",
      name: "canary-stable-1a",
      deployment: "canary-stable",
      labels: { app: "canary", track: "stable" },
    },
  ],
  users: { "alice-token": "alice", "admin-token": "admin" },
  execAllowed: { alice: ["team-a"], admin: ["team-a", "team-b", "entryway", "entryway-connect"] },
};

/** The stand-in with the fixtures, and a gateway on it with the Kubernetes backend and authorizer. */
async function kubernetesGateway(
  protocol: ExecProtocol,
  overrides: Parameters<typeof startGateway>[2],
): Promise<{ kube: KubeStandin; g: TestGateway }> {
  const kube = await startKubeStandin({ ...fixtures, protocol });
  const kubeConfig = loadKubeConfig(kube.kubeconfigPath);
  const g = await startGateway(
    kubernetesBackend(kubeConfig),
    kubernetesAuthorizer(kubeConfig, defaultConfig.tokenAudiences),
    overrides,
  );
  return { kube, g };
}

for (const protocol of ["v5.channel.k8s.io"] as ExecProtocol[]) {
  execBackendCases(`Kubernetes (${protocol}, stand-in API server + kubelet)`, async () => {
    const kube = await startKubeStandin({ ...fixtures, protocol });
    return {
      backend: kubernetesBackend(loadKubeConfig(kube.kubeconfigPath)),
      target: { namespace: "team-a", pod: "web-0", container: "app" },
      execIds: async () => kube.execs.map((_, i) => String(i)),
      shells: async () => kube.liveShells().length,
      stop: () => kube.stop(),
    };
  });
}

describe("Kubernetes backend: a runtime that sets the terminal's modes late, as conmon does", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  beforeAll(async () => {
    kube = await startKubeStandin({ ...fixtures, protocol: "v5.channel.k8s.io", lateTerminalModesMs: 300 });
    g = await startGateway(kubernetesBackend(loadKubeConfig(kube.kubeconfigPath)), tokenAuthorizer());
  });
  afterAll(async () => {
    await g?.stop();
    await kube?.stop();
  });

  it("raw mode set as the command's very first action survives: the wrapper starts the command only after the runtime is done", async () => {
    const target = { namespace: "team-a", pod: "web-0", container: "app" };
    for (let i = 0; i < 3; i++)
      expect(rawModeKept(await runRawFirst(g.url({ ...target, command: RAW_FIRST }), "user:alice"))).toBe(true);

    // The control: the same command started at once (the wrapper not told to wait) loses its raw mode.
    const backend = kubernetesBackend(loadKubeConfig(kube.kubeconfigPath));
    let output = "";
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const onOutput = (chunk: Buffer) => void (output += chunk.toString("latin1"));
    const exec = await backend.exec(
      await backend.resolve({ kind: "pod", ...target }),
      wrapCommand(RAW_FIRST, {}),
      { cols: 80, rows: 24 },
      { onOutput, onEnd: () => ended() },
    );
    await expect.poll(() => output.includes("ready")).toBe(true);
    exec.write(Buffer.from(RAW_FIRST_ANSWER));
    await done;
    expect(rawModeKept(output)).toBe(false);
  });
});

describe("Kubernetes backend: v4.channel.k8s.io, targets and the Kubernetes authorizer", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  beforeAll(async () => {
    ({ kube, g } = await kubernetesGateway("v4.channel.k8s.io", {
      gatewayNamespace: "entryway",
      refusedNamespaces: ["entryway-connect"],
    }));
  });
  afterAll(async () => {
    await g?.stop();
    await kube?.stop();
  });

  const open = (query: Record<string, string | string[]>, token = "alice-token") =>
    EntryClient.connect(g.url(query), { token });

  it("v4: echo, resize and a non-zero exit code", async () => {
    const client = await open({ namespace: "team-a", pod: "web-1" });
    client.winch(99, 33);
    client.type("stty size; echo $((6*7))\n");
    await client.waitFor(/[\r\n]33 99\r\n42\r\n/);
    client.type("exit 5\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 5 });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "web-1", container: "app", tty: true });
  });

  it("v4, pipe mode: stdout and stderr apart; EOF is not passed (CLOSE is v5's) and does not cut the session", async () => {
    // client-node ends a v4 stdin by closing the WebSocket, which would lose "late" and the exit code.
    const client = await open({
      namespace: "team-a",
      pod: "web-1",
      tty: "false",
      command: ["/bin/sh", "-c", 'read a; echo "got $a" >&2; sleep 1; echo "late $a"; exit 4'],
    });
    client.type("x\n");
    client.eof();
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 4 });
    expect(client.text).toBe("late x\n");
    expect(client.errorOutput.toString()).toBe("got x\n");
    await expect.poll(() => g.audit.at(-1)).toMatchObject({ event: "session.end", exitCode: 4 });
  });

  it("the stand-in honours the CLOSE signal (255, 0) under v5 only, as the API server does", async () => {
    const catThenClose = async (protocol: ExecProtocol) => {
      const standin = protocol === "v4.channel.k8s.io" ? kube : await startKubeStandin({ ...fixtures, protocol });
      try {
        const ca = Buffer.from(
          (
            JSON.parse(readFileSync(standin.kubeconfigPath, "utf8")) as {
              clusters: { cluster: Record<string, string> }[];
            }
          ).clusters[0]!.cluster["certificate-authority-data"]!,
          "base64",
        );
        const url = `${standin.url.replace("https:", "wss:")}/api/v1/namespaces/team-a/pods/web-1/exec?command=cat&stdin=true&stdout=true&stderr=true&container=app`;
        const ws = new WebSocket(url, [protocol], {
          ca,
          headers: { authorization: `Bearer ${fixtures.serviceAccountToken}` },
        });
        const frames: Buffer[] = [];
        ws.on("message", (data: Buffer) => frames.push(data));
        await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
        ws.send(Buffer.from("\x00one\n"));
        await expect.poll(() => frames.some((f) => f[0] === 1)).toBe(true);
        ws.send(Buffer.from([255, 0]));
        ws.send(Buffer.from("\x00two\n"));
        await expect
          .poll(
            () =>
              frames.some((f) => f[0] === 3) ||
              Buffer.concat(frames.filter((f) => f[0] === 1).map((f) => f.subarray(1))).toString() === "one\ntwo\n",
          )
          .toBe(true);
        const ended = frames.some((f) => f[0] === 3);
        ws.terminate();
        return ended;
      } finally {
        if (standin !== kube) await standin.stop();
      }
    };
    expect(await catThenClose("v5.channel.k8s.io")).toBe(true); // cat saw the end of its input and exited
    expect(await catThenClose("v4.channel.k8s.io")).toBe(false); // the frame is skipped: cat read "two" and runs on
  });

  it("resolves a StatefulSet instance to <name>-<n> and a Deployment instance by creation order", async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ namespace: "team-a", workload: "web", instance: "1" }, "web-1", "app"],
      [{ namespace: "team-a", workload: "statefulset/web", instance: "0", container: "sidecar" }, "web-0", "sidecar"],
      [{ namespace: "team-a", workload: "deployment/api", instance: "0" }, "api-7f9c-zzz", "api"], // oldest running; the pending one is skipped
      [{ namespace: "team-a", workload: "api", instance: "1" }, "api-7f9c-aaa", "api"],
    ];
    for (const [query, pod, container] of cases) {
      const client = await open(query);
      client.type("exit 0\n");
      expect(await client.closed).toMatchObject({ exitCode: 0 });
      expect(kube.execs.at(-1)).toMatchObject({ pod, container });
    }
  });

  it("Entry's own client: app-name, proc-name and instance-no headers", async () => {
    const client = await EntryClient.connect(g.url({}), {
      token: "alice-token",
      headers: { "app-name": "team-a", "proc-name": "web", "instance-no": "0" },
    });
    client.type("exit 0\n");
    expect(await client.closed).toMatchObject({ exitCode: 0 });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "web-0" });
  });

  it("picks workload instances through ownership: not a pod named like an instance, nor one with the Deployment's labels (and more) that another owns, nor one matchExpressions leaves out", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ namespace: "team-a", workload: "deployment/api", instance: "0" }, "api-7f9c-zzz"], // not api-debug-x nor api-bare, both older
      [{ namespace: "team-a", workload: "deployment/canary", instance: "0" }, "canary-5d-q"], // not canary-stable, older, with canary's matchLabels
    ];
    for (const [query, pod] of cases) {
      const client = await open(query);
      client.type("exit 0\n");
      expect(await client.closed).toMatchObject({ exitCode: 0 });
      expect(kube.execs.at(-1)).toMatchObject({ pod });
    }
    const before = kube.execs.length;
    const impostor = await (await open({ namespace: "team-a", workload: "statefulset/web", instance: "5" })).closed;
    expect(impostor).toMatchObject({
      closeCode: "not-found",
      reason: "pod team-a/web-5 does not belong to statefulset web",
    });
    expect(await (await open({ namespace: "team-a", workload: "deployment/api", instance: "2" })).closed).toMatchObject(
      { closeCode: "not-found" },
    ); // api has 2 running pods
    expect(kube.execs.length).toBe(before);
  });

  it.each([
    [{ namespace: "team-a", pod: "nope" }, "not-found"],
    [{ namespace: "team-a", workload: "deployment/api", instance: "2" }, "not-found"],
    [{ namespace: "team-a", pod: "web-0", container: "nope" }, "not-found"],
    [{ namespace: "team-a", workload: "ghost", instance: "0" }, "not-found"],
  ])("answers %o with %s", async (query, closeCode) => {
    expect(await (await open(query)).closed).toMatchObject({ closeCode });
  });

  it("when the API server drops the exec stream, tells the client and ends the shell left behind", async () => {
    const client = await open({ namespace: "team-a", pod: "web-1" });
    client.type("echo $((1+2))\n");
    await client.waitFor(/[\r\n]3\r\n/);
    const shells = kube.liveShells().length;
    kube.dropConnections();
    expect(await client.closed).toMatchObject({
      closeCode: "backend-error",
      reason: expect.stringMatching(/lost the connection to the shell/),
    });
    expect(await client.closed).not.toHaveProperty("exitCode");
    await expect.poll(() => kube.liveShells().length, { timeout: 10_000 }).toBe(shells - 1);
  });

  it("refuses the gateway's own namespace even to a user RBAC lets in, before asking the cluster", async () => {
    const execs = kube.execs.length;
    const reviews = kube.tokenReviews.length;
    const refused = await (await open({ namespace: "entryway", pod: "entryway-exec-gateway-0" }, "admin-token")).closed;
    expect(refused).toMatchObject({
      closeCode: "denied",
      reason: "permission denied: namespace entryway is the gateway's own",
    });
    const byWorkload = await (
      await EntryClient.connect(g.url({}), {
        token: "admin-token",
        headers: { "app-name": "entryway", "proc-name": "entryway-exec-gateway", "instance-no": "0" },
      })
    ).closed;
    expect(byWorkload).toMatchObject({ closeCode: "denied" });
    expect(kube.execs.length).toBe(execs);
    expect(kube.tokenReviews.length).toBe(reviews);
    expect(g.audit.at(-1)).toMatchObject({
      event: "session.refused",
      target: "entryway/entryway-exec-gateway#0",
      closeCode: "denied",
    });
    // The same user still enters other namespaces.
    const elsewhere = await open({ namespace: "team-b", pod: "db-0" }, "admin-token");
    elsewhere.type("exit 0\n");
    expect(await elsewhere.closed).toMatchObject({ exitCode: 0 });
  });

  it("refuses the stack's other namespaces (refusedNamespaces: the CONNECT gateway's) even to a user RBAC lets in, before asking the cluster", async () => {
    const execs = kube.execs.length;
    const reviews = kube.tokenReviews.length;
    const refused = await (
      await open({ namespace: "entryway-connect", pod: "entryway-connect-gateway-0" }, "admin-token")
    ).closed;
    expect(refused).toMatchObject({
      closeCode: "denied",
      reason: "permission denied: namespace entryway-connect belongs to the stack; the gateway does not enter it",
    });
    expect(kube.execs.length).toBe(execs);
    expect(kube.tokenReviews.length).toBe(reviews);
  });

  it("denies through TokenReview + SubjectAccessReview before any exec", async () => {
    const before = kube.execs.length;
    const otherNamespace = await (await open({ namespace: "team-b", pod: "db-0" })).closed;
    expect(otherNamespace).toMatchObject({
      closeCode: "denied",
      reason: expect.stringMatching(/alice may not exec in namespace team-b/),
    });
    expect(await (await open({ namespace: "team-a", pod: "web-0" }, "forged")).closed).toMatchObject({
      closeCode: "denied",
    });
    expect(kube.execs.length).toBe(before);
  });
});

describe("sessions end with their grant (the Kubernetes authorizer)", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  beforeAll(async () => {
    ({ kube, g } = await kubernetesGateway("v5.channel.k8s.io", { reauthorizeIntervalMs: 300 }));
  });
  afterAll(async () => {
    await g?.stop();
    await kube?.stop();
  });
  const enter = async (token: string) => {
    const client = await EntryClient.connect(g.url({ namespace: "team-a", pod: "web-1" }), { token });
    client.type("echo in-$((1+1))\n");
    await client.waitFor(/in-2/);
    return client;
  };

  it("a short-lived token (kubectl create token --duration) ends the session when it expires", async () => {
    const token = await new UnsecuredJWT({ sub: "system:serviceaccount:team-a:ci" })
      .setExpirationTime(Math.floor(Date.now() / 1000) + 8)
      .encode();
    kube.users.set(token, standinUser(token, "ci"));
    kube.execAllowed.ci = ["team-a"];
    const client = await enter(token);
    expect(await client.closed).toMatchObject({ closeCode: "expired", reason: "the access token expired" });
    await expect.poll(() => kube.liveShells().length, { timeout: 10_000 }).toBe(0);
  });

  it("a removed RoleBinding ends a running session (denied), a deleted ServiceAccount too (expired); a session whose grant holds goes on", async () => {
    for (const user of ["frank", "grace", "heidi"]) {
      kube.users.set(`${user}-token`, standinUser(`${user}-token`, user));
      kube.execAllowed[user] = ["team-a"];
    }
    const [frank, grace, heidi] = [await enter("frank-token"), await enter("grace-token"), await enter("heidi-token")];
    kube.execAllowed.frank = [];
    expect(await frank.closed).toMatchObject({
      closeCode: "denied",
      reason: expect.stringMatching(/^permission denied: frank may no longer exec in namespace team-a/),
    });
    kube.users.delete("grace-token");
    expect(await grace.closed).toMatchObject({
      closeCode: "expired",
      reason: "the access token is no longer valid (token rejected)",
    });
    heidi.type("echo still-$((2+2))\n");
    await heidi.waitFor(/still-4/);
    heidi.type("exit 0\n");
    expect(await heidi.closed).toMatchObject({ closeCode: "exit" });
    await expect.poll(() => kube.liveShells().length, { timeout: 10_000 }).toBe(0);
  });
});

describe("readiness", () => {
  it("follows the API server", async () => {
    const kube = await startKubeStandin({ ...fixtures, protocol: "v5.channel.k8s.io" });
    const g = await startGateway(kubernetesBackend(loadKubeConfig(kube.kubeconfigPath)), tokenAuthorizer());
    try {
      expect((await fetch(`${g.monitoring}/readyz`)).status).toBe(200);
      await kube.stop();
      expect((await fetch(`${g.monitoring}/readyz`)).status).toBe(503);
    } finally {
      await g.stop();
    }
  });
});
