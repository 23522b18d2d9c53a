// GET /v1/targets (entryway ls) with the Kubernetes backend and the Kubernetes authorizer on the
// stand-in API server: each user's list is exactly the set of pods the WebSocket endpoint lets
// them into (found by trying every pod), another user's is smaller, the gateway's own and refused
// namespaces are never listed, and a namespace the user may not enter answers as a namespace that
// does not exist does. Then `entryway ls` as a process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesAuthorizer } from "../src/auth/kubernetes.js";
import { kubernetesBackend, loadKubeConfig } from "../src/backends/kubernetes.js";
import { defaultConfig } from "../src/config.js";
import { cleanEnv, runCli } from "../../testkit/gateway/cli-harness.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { startGateway, type TestGateway } from "../../testkit/gateway/gateway.js";
import { startKubeStandin, type KubeStandin } from "../../testkit/gateway/kube-standin.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PODS = [
  { namespace: "team-a", name: "web-0", containers: ["app", "sidecar"] },
  { namespace: "team-a", name: "web-1", containers: ["app"] },
  { namespace: "team-a", name: "job-x", containers: ["job"], phase: "Succeeded" },
  { namespace: "team-b", name: "db-0", containers: ["db"] },
  { namespace: "vault", name: "vault-0", containers: ["vault"] },
  { namespace: "entryway", name: "entryway-exec-gateway-0", containers: ["gateway"] },
  { namespace: "entryway-connect", name: "connect-0", containers: ["istio-proxy"] },
];

describe("GET /v1/targets: what the caller may enter, by the exec authorizer", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  let home: string;
  beforeAll(async () => {
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa-token",
      pods: PODS,
      users: { "admin-token": "admin", "alice-token": "alice", "bob-token": "bob" },
      execAllowed: {
        // RBAC allows the admin everywhere, the stack's own namespaces included.
        admin: ["team-a", "team-b", "vault", "entryway", "entryway-connect"],
        alice: ["team-a", "team-b"],
        // One pod by name (a Role with resourceNames).
        bob: ["team-a/web-0"],
      },
    });
    const kubeConfig = loadKubeConfig(kube.kubeconfigPath);
    g = await startGateway(
      kubernetesBackend(kubeConfig),
      kubernetesAuthorizer(kubeConfig, defaultConfig.tokenAudiences),
      {
        authorizer: "kubernetes",
        gatewayNamespace: "entryway",
        refusedNamespaces: ["entryway-connect"],
      },
    );
    home = mkdtempSync(join(tmpdir(), "entryway-ls-"));
  });
  afterAll(async () => {
    await g?.stop();
    await kube?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const list = async (token: string | undefined, query = "") => {
    const response = await fetch(`${g.base}/v1/targets${query}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: response.status, body: await response.text() };
  };
  const listed = async (token: string, query = "") =>
    (JSON.parse((await list(token, query)).body) as { targets: { target: string }[] }).targets.map((t) => t.target);

  /** The running pods the endpoint lets `token` into: tried one by one. */
  async function enterable(token: string): Promise<string[]> {
    const allowed: string[] = [];
    for (const pod of PODS.filter((p) => !p.phase)) {
      const client = await EntryClient.connect(g.url({ namespace: pod.namespace, pod: pod.name }), { token });
      // In: the shell answers (then the client leaves). Not in: the endpoint's CLOSE says denied.
      client.type("echo in-$((1+1))\n");
      const closed = await Promise.race([
        client.closed,
        client.waitFor(/in-2/).then(
          () => undefined,
          () => client.closed,
        ),
      ]);
      client.ws.close();
      if (closed === undefined) allowed.push(`${pod.namespace}/${pod.name}`);
      else expect(closed.closeCode).toBe("denied");
      await client.closed;
    }
    return allowed.sort();
  }

  it("lists exactly the running pods each user may exec into; another user sees fewer", async () => {
    const admin = await listed("admin-token");
    expect(admin.sort()).toEqual(["team-a/web-0", "team-a/web-1", "team-b/db-0", "vault/vault-0"]);
    expect(admin.sort()).toEqual(await enterable("admin-token"));
    const alice = await listed("alice-token");
    expect(alice.sort()).toEqual(["team-a/web-0", "team-a/web-1", "team-b/db-0"]);
    expect(alice.sort()).toEqual(await enterable("alice-token"));
    const bob = await listed("bob-token");
    expect(bob).toEqual(["team-a/web-0"]);
    expect(bob).toEqual(await enterable("bob-token"));
    expect(JSON.parse((await list("admin-token", "?namespace=team-a")).body)).toEqual({
      targets: [
        { target: "team-a/web-0", namespace: "team-a", pod: "web-0", containers: ["app", "sidecar"] },
        { target: "team-a/web-1", namespace: "team-a", pod: "web-1", containers: ["app"] },
      ],
    });
    expect(g.access.filter((e) => e.event === "targets.list" && e.status === 200).map((e) => e.user)).toContain("bob");
  });

  it("answers a namespace the user may not enter exactly as one that does not exist", async () => {
    const denied = await list("alice-token", "?namespace=vault");
    const missing = await list("alice-token", "?namespace=no-such-namespace");
    expect(denied).toEqual({ status: 200, body: '{"targets":[]}\n' });
    expect(missing).toEqual(denied);
    // The gateway's own namespace too, which RBAC would let the admin into.
    expect(await list("admin-token", "?namespace=entryway")).toEqual(denied);
  });

  it("wants a token the authorizer knows, and a valid namespace", async () => {
    expect((await list(undefined)).status).toBe(401);
    expect(await list("stolen-token")).toMatchObject({ status: 403, body: expect.stringContaining("token rejected") });
    expect(await list("alice-token", "?namespace=Not_A_Namespace")).toMatchObject({ status: 400 });
  });

  it("entryway ls prints the user's targets with their containers; a refused token exits 77", async () => {
    const env = cleanEnv(home, { ENTRYWAY_GATEWAY: g.base });
    writeFileSync(join(home, "alice-token"), "alice-token\n");
    const alice = await runCli(["ls", "--token-file", join(home, "alice-token")], { env });
    expect(alice.code, alice.stderr).toBe(0);
    expect(alice.stdout).toBe(
      ["TARGET        CONTAINERS", "team-a/web-0  app,sidecar", "team-a/web-1  app", "team-b/db-0   db", ""].join("\n"),
    );
    const empty = await runCli(["ls", "vault"], { env: { ...env, ENTRYWAY_TOKEN: "alice-token" } });
    expect(empty).toMatchObject({ code: 0, stdout: "", stderr: "No targets you may enter in vault.\n" });
    const refused = await runCli(["ls"], { env: { ...env, ENTRYWAY_TOKEN: "stolen-token" } });
    expect(refused.code).toBe(77);
    expect(refused.stderr).toMatch(/^entryway: permission denied: the gateway answered HTTP 403/);
  });
});
