/**
 * The exec gateway's `kubernetes` authorizer and backend against the REAL API server
 * (test/real/global-setup.ts): the gateway runs as its own ServiceAccount with the rules the
 * ExecGateway component grants (EXEC_RULES in the targets, REVIEW_RULES at cluster scope), users
 * hold tokens from the TokenRequest API, the real TokenReview checks their audience, the real
 * authorizer (RBAC) decides every session, and targets (a pod, a Deployment's and a StatefulSet's
 * instance) are resolved from the real API.
 *
 * There is no kubelet (kwok's node is a record only, at 127.0.0.1): an allowed session reaches the
 * API server's exec endpoint, which cannot dial the node, and the session ends with a backend
 * error whose cause (the API server's words) is in the gateway's log only. The API server's audit
 * log shows a denied session never asked for an exec.
 */
import { AppsV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { EXEC_RULES, REVIEW_RULES } from "../../components/exec-gateway";
import { defaultConfig } from "../../gateway/src/config";
import type { Gateway } from "../../gateway/src/server";
import { EntryClient } from "../../testkit/gateway/client";
import { grantRole, POD_EXEC_RULE, serviceAccountToken, tokenKubeConfig } from "../../testkit/harness/kube-users";
import { kubernetesGateway } from "../../testkit/harness/kubernetes-gateway";
import { execAuditEvents, grantGatewayRights } from "./exec-access";

const { kubeconfig, server, caFile, auditLog } = inject("controlPlane");
const admin = new KubeConfig();
admin.loadFromFile(kubeconfig);
const core = admin.makeApiClient(CoreV1Api);
const apps = admin.makeApiClient(AppsV1Api);
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);

const GATEWAY_NS = "authz-gateway";
const TEAM_A = "authz-team-a";
const TEAM_B = "authz-team-b";
const AUDIENCE = defaultConfig.tokenAudiences[0]!;

const token = (namespace: string, name: string, audiences: string[]) =>
  serviceAccountToken(core, { namespace, name }, audiences);

async function waitReady(namespace: string, labelSelector: string): Promise<string> {
  for (let i = 0; i < 240; i++) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector });
    const ready = pods.items.find((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    if (ready) return ready.metadata!.name!;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no Ready pod for ${labelSelector} in ${namespace}`);
}

const restricted = {
  securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "app",
      image: "registry.example.com/app:1",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
};

describe("the kubernetes authorizer and backend on the real API server", () => {
  let gateway: Gateway;
  let url: string;
  let pods: { pod: string; deployment: string; statefulSet: string };
  const logged: { level: string; message: string; [field: string]: unknown }[] = [];

  beforeAll(async () => {
    // The gateway's rights, as the ExecGateway component grants them.
    await grantGatewayRights(
      { core, rbac },
      { gatewayNamespace: GATEWAY_NS, teamA: TEAM_A, teamB: TEAM_B, reviewRole: "authz-exec-gateway-review" },
      EXEC_RULES,
      REVIEW_RULES,
    );
    // alice may exec in team-a; bob may not, anywhere.
    await grantRole(rbac, TEAM_A, { name: "exec", rules: [POD_EXEC_RULE], binding: "alice-exec" }, [
      { namespace: TEAM_A, name: "alice" },
    ]);

    // Targets: a pod, a Deployment and a StatefulSet in team-a, a pod in team-b (kwok makes them Ready).
    for (const namespace of [TEAM_A, TEAM_B]) {
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name: "web-pod", labels: { app: "web-pod" } }, spec: restricted },
      });
    }
    const template = (app: string) => ({ metadata: { labels: { app } }, spec: restricted });
    await apps.createNamespacedDeployment({
      namespace: TEAM_A,
      body: {
        metadata: { name: "api" },
        spec: { replicas: 1, selector: { matchLabels: { app: "api" } }, template: template("api") },
      },
    });
    await apps.createNamespacedStatefulSet({
      namespace: TEAM_A,
      body: {
        metadata: { name: "db" },
        spec: { replicas: 1, serviceName: "db", selector: { matchLabels: { app: "db" } }, template: template("db") },
      },
    });
    pods = {
      pod: await waitReady(TEAM_A, "app=web-pod"),
      deployment: await waitReady(TEAM_A, "app=api"),
      statefulSet: await waitReady(TEAM_A, "app=db"),
    };
    await waitReady(TEAM_B, "app=web-pod");

    const gatewayConfig = tokenKubeConfig(
      server,
      caFile,
      await token(GATEWAY_NS, "exec-gateway", ["https://kubernetes.default.svc.cluster.local"]),
    );
    gateway = kubernetesGateway(gatewayConfig, {
      logger: { log: (level, message, fields) => logged.push({ level, message, ...fields }) },
    });
    url = `ws://127.0.0.1:${(await gateway.listen()).port}/v1/enter`;
  });

  afterAll(async () => {
    await gateway?.shutdown("test over");
    for (const name of [GATEWAY_NS, TEAM_A, TEAM_B]) await core.deleteNamespace({ name }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: "authz-exec-gateway-review" }).catch(() => undefined);
    await rbac.deleteClusterRoleBinding({ name: "authz-exec-gateway-review" }).catch(() => undefined);
  });

  async function session(bearer: string, query: string): Promise<{ reason: string; closeCode?: string }> {
    const client = await EntryClient.connect(`${url}?${query}`, { token: bearer });
    return client.closed;
  }

  it("allowed sessions reach the kubelet dial of the API server's exec, which finds no kubelet: the session ends as a backend error, its cause in the gateway's log only", async () => {
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    for (const query of [
      `namespace=${TEAM_A}&pod=${pods.pod}`,
      `namespace=${TEAM_A}&workload=deployment/api&instance=0`,
      `namespace=${TEAM_A}&workload=statefulset/db&instance=0`,
    ]) {
      const closed = await session(alice, query);
      // Authorized (RBAC let the gateway's WebSocket exec through: get and create pods/exec), then
      // the API server could not reach the node's kubelet (kwok's node, at 127.0.0.1, has none), and
      // the session ends with a backend error; the API server's own words for it (the node's
      // kubelet address, the exec URL) go to the gateway's log, never to the client.
      expect(closed.reason, query).toMatch(
        /^lost the connection to the shell \(session [^;]+; the gateway's log has the cause\)$/,
      );
      expect(closed.closeCode, query).toBe("backend-error");
    }
    const causes = logged
      .filter((entry) => entry.message === "lost the connection to the shell")
      .map((entry) => String(entry.error));
    expect(causes).toHaveLength(3);
    for (const cause of causes) expect(cause).toMatch(/dial tcp 127\.0\.0\.1:10250: connect: connection refused/);
    const execs = execAuditEvents(auditLog, TEAM_A).filter(
      (e) => e.user === `system:serviceaccount:${GATEWAY_NS}:exec-gateway`,
    );
    expect(execs.map((e) => e.pod).sort()).toEqual([pods.deployment, pods.pod, pods.statefulSet].sort());
  });

  it("denied sessions never reach the exec endpoint: the wrong user, the wrong namespace, the wrong audience", async () => {
    const before = execAuditEvents(auditLog, TEAM_A).length + execAuditEvents(auditLog, TEAM_B).length;
    const bob = await token(TEAM_A, "bob", [AUDIENCE]);
    expect((await session(bob, `namespace=${TEAM_A}&pod=${pods.pod}`)).reason).toMatch(
      /may not exec in namespace authz-team-a/,
    );
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    expect((await session(alice, `namespace=${TEAM_B}&pod=web-pod`)).reason).toMatch(
      /may not exec in namespace authz-team-b/,
    );
    // A token for the API server itself is refused by the TokenReview's audience check.
    const apiToken = await token(TEAM_A, "alice", ["https://kubernetes.default.svc.cluster.local"]);
    expect((await session(apiToken, `namespace=${TEAM_A}&pod=${pods.pod}`)).reason).toMatch(/token rejected/);
    expect(execAuditEvents(auditLog, TEAM_A).length + execAuditEvents(auditLog, TEAM_B).length).toBe(before);
  });

  it("a revoked RoleBinding denies the next session", async () => {
    const alice = await token(TEAM_A, "alice", [AUDIENCE]);
    await rbac.deleteNamespacedRoleBinding({ namespace: TEAM_A, name: "alice-exec" });
    expect((await session(alice, `namespace=${TEAM_A}&pod=${pods.pod}`)).reason).toMatch(
      /may not exec in namespace authz-team-a/,
    );
  });
});
