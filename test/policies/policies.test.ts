/**
 * The policy pack's rules, run without the Pulumi CLI: each CrossGuard policy's own
 * validateResource / validateStack callback is called with the arguments the engine would pass
 * (type, props = the resource's inputs, config). The default stack (Pulumi.dev.yaml, everything
 * on) and every chart scenario pass every rule; for each rule a bad fixture makes it fire.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import * as k8s from "@pulumi/kubernetes";
import { parseStackConfig, Stack } from "../../components/stack";
import { ConnectGateway } from "../../components/ssh/connect-gateway";
import {
  connectDedicatedGateway,
  connectStaticClusters,
  DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD,
  entrywayPolicies,
  execRbac,
  gatewayDebugRbac,
  noDefaultAdminPassword,
  noExecIntoGatewayNamespace,
  podSecurityRestricted,
  rteBoundary,
  rteOwnMetricsToken,
  rteTagMatchesApp,
  seedCredentials,
  secretReadersAlone,
  workspacePdbNoLoadBalancer,
} from "../../policies/rules";
import { allViolations, asResource, runResourcePolicy, runStackPolicy, type Resource } from "./run-policies";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../harness/helm";
import { render } from "../harness/pulumi";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function devStackResources(): Promise<Resource[]> {
  const document = parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as { config: Record<string, unknown> };
  const config = parseStackConfig(document.config["entryway:stack"]);
  const { resources } = await render(() => new Stack("dev", config));
  return resources.filter((r) => r.custom).map((r) => ({ type: r.type, props: r.inputs }));
}

// ----- good fixtures, made bad one way at a time -----

const restrictedContainer = () => ({
  allowPrivilegeEscalation: false,
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
});

function deployment(containers: Obj[], labels: Record<string, string> = { "app.kubernetes.io/name": "demo" }, podContext: Obj = {}): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "demo", namespace: "ns", labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" }, ...podContext }, containers },
      },
    },
  };
}

const rteContainer = (extraEnv: Obj[] = [], securityContext: Obj = { ...restrictedContainer(), runAsUser: 1000 }) => ({
  name: "rte",
  image: "ghcr.io/ansibleforms/ansibleforms-rte-full:7.3.0",
  env: [{ name: "RTE_MODE", value: "inbound" }, { name: "RTE_TOKEN", valueFrom: { secretKeyRef: { name: "keys", key: "rte-token" } } }, ...extraEnv],
  securityContext,
});

function envoyFilter(patches: Obj[], selector: Record<string, string> = { "app.kubernetes.io/name": "connect-gateway" }): Obj {
  return {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "f", namespace: "ns" },
    spec: { workloadSelector: { labels: selector }, configPatches: patches },
  };
}
const connectListener = (port: number) => ({
  applyTo: "NETWORK_FILTER",
  match: { context: "GATEWAY", listener: { portNumber: port, filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } } },
  patch: { operation: "MERGE", value: { typed_config: { upgrade_configs: [{ upgrade_type: "CONNECT" }] } } },
});
const workspaceRoute = (route: Obj) => ({
  applyTo: "VIRTUAL_HOST",
  match: { context: "GATEWAY", routeConfiguration: { portNumber: 2222, name: "http.2222" } },
  patch: { operation: "ADD", value: { name: "ws", domains: ["ws.ns.svc.cluster.local:22"], routes: [{ match: { connect_matcher: {} }, route }] } },
});
const staticRoute = { cluster: "outbound|22||ws.ns.svc.cluster.local", timeout: "0s", upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }] };

const role = (kind: "Role" | "ClusterRole", rules: Obj[]) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: { name: "entryway-exec-gateway", ...(kind === "Role" ? { namespace: "team-a" } : {}), labels: { "app.kubernetes.io/name": "exec-gateway" } },
  rules,
});
const execRules = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
];

const wsLabels = { "app.kubernetes.io/name": "ssh-workspace", "app.kubernetes.io/instance": "entryway", "app.kubernetes.io/component": "ws-alice" };
const workspace = (): Obj => ({
  ...deployment([{ name: "sshd", image: "sshd:1", securityContext: restrictedContainer() }], wsLabels),
  kind: "StatefulSet",
  metadata: { name: "ws-alice", namespace: "ns", labels: wsLabels },
});
const pdb = (selector: Record<string, string>) => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: { name: "ws-alice", namespace: "ns" },
  spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
});

const appContainer = (env: Obj[]) => ({ name: "app", image: "ghcr.io/ansibleforms/ansibleforms:7.3.0", env, securityContext: restrictedContainer() });

describe("policy pack", () => {
  it("has the thirteen rules, each with a description; all mandatory but the RTE tag advice", () => {
    expect(entrywayPolicies.map((p) => p.name)).toEqual([
      "entryway-pod-security-restricted",
      "entryway-rte-boundary",
      "entryway-connect-static-clusters",
      "entryway-connect-dedicated-gateway",
      "entryway-exec-rbac",
      "entryway-no-exec-into-gateway-namespace",
      "entryway-exec-gateway-debug-rbac",
      "entryway-workspace-pdb-no-loadbalancer",
      "entryway-no-default-admin-password",
      "entryway-rte-tag-matches-app",
      "entryway-seed-token-references",
      "entryway-rte-own-metrics-token",
      "entryway-secret-readers-alone",
    ]);
    for (const policy of entrywayPolicies) {
      expect(policy.description.length).toBeGreaterThan(20);
      expect(policy.enforcementLevel).toBe(policy === rteTagMatchesApp ? "advisory" : "mandatory");
    }
  });

  it("passes every rule on the default stack (Pulumi.dev.yaml), which exercises them", async () => {
    const resources = await devStackResources();
    const kinds = new Set(resources.map((r) => r.type.split(":")[2]));
    // The rules must have something to look at, or passing proves nothing.
    expect([...kinds]).toEqual(expect.arrayContaining(["Deployment", "Role", "ClusterRole"]));
    expect(await allViolations(resources)).toEqual([]);
  });

  it("passes every rule on every chart scenario (Helm 4)", async () => {
    const helm = helmBinaries()[0];
    for (const { chart, scenarios } of chartScenarios()) {
      for (const scenario of scenarios) {
        const objects = helmTemplate(helm, chart, { valuesFiles: [scenario] });
        // Chart scenarios may grant cluster-wide exec on purpose (clusterWide: true) with the policy allowing it.
        const allowClusterWide = objects.some((o) => o.kind === "ClusterRole" && String(o.metadata?.name).endsWith("exec-gateway-exec"));
        expect(await allViolations(objects.map(asResource), { allowClusterWideExec: allowClusterWide }), path.basename(scenario)).toEqual([]);
      }
    }
  });

  describe("Pod Security restricted", () => {
    it.each([
      ["a privileged container", { ...restrictedContainer(), privileged: true }, /privileged is not allowed/],
      ["privilege escalation", { ...restrictedContainer(), allowPrivilegeEscalation: true }, /allowPrivilegeEscalation must be false/],
      ["capabilities not dropped", { ...restrictedContainer(), capabilities: {} }, /must drop ALL/],
      ["an added capability", { ...restrictedContainer(), capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] } }, /adding capability NET_ADMIN/],
      ["root", { ...restrictedContainer(), runAsUser: 0 }, /runs as root/],
      ["no seccomp", { ...restrictedContainer(), seccompProfile: { type: "Unconfined" } }, /seccompProfile/],
    ])("fires on %s", async (_name, securityContext, message) => {
      const violations = await runResourcePolicy(podSecurityRestricted, asResource(deployment([{ name: "c", image: "x", securityContext }], undefined, { seccompProfile: undefined })));
      expect(violations.join("\n")).toMatch(message);
    });

    it("fires on host namespaces and hostPath volumes", async () => {
      const bad = deployment([{ name: "c", image: "x", securityContext: restrictedContainer() }]);
      bad.spec.template.spec.hostNetwork = true;
      bad.spec.template.spec.volumes = [{ name: "root", hostPath: { path: "/" } }];
      const violations = await runResourcePolicy(podSecurityRestricted, asResource(bad));
      expect(violations).toEqual([expect.stringMatching(/hostNetwork is not allowed/), expect.stringMatching(/hostPath volume "root"/)]);
    });

    it("fires on volume types, host ports, sysctls and proc mounts that restricted does not allow", async () => {
      const bad = deployment([{ name: "c", image: "x", ports: [{ containerPort: 22, hostPort: 2222 }], securityContext: { ...restrictedContainer(), procMount: "Unmasked" } }]);
      bad.spec.template.spec.volumes = [{ name: "share", nfs: { server: "nfs.example", path: "/" } }, { name: "ok", emptyDir: {} }];
      bad.spec.template.spec.securityContext.sysctls = [{ name: "kernel.msgmax", value: "1" }, { name: "net.ipv4.tcp_syncookies", value: "1" }];
      const violations = await runResourcePolicy(podSecurityRestricted, asResource(bad));
      expect(violations).toEqual([
        expect.stringMatching(/volume "share" of type nfs is not allowed/),
        expect.stringMatching(/sysctl kernel.msgmax is not allowed/),
        expect.stringMatching(/procMount Unmasked is not allowed/),
        expect.stringMatching(/hostPort 2222 is not allowed/),
      ]);
    });

    it("allows the documented sshd exception only for an ssh-workspace's sshd container", async () => {
      const sshd = { ...restrictedContainer(), capabilities: { drop: ["ALL"], add: ["SETUID", "SETGID", "SYS_CHROOT", "AUDIT_WRITE"] } };
      const ok = deployment([{ name: "sshd", image: "x", securityContext: sshd }], wsLabels);
      expect(await runResourcePolicy(podSecurityRestricted, asResource(ok))).toEqual([]);
      const otherContainer = deployment([{ name: "helper", image: "x", securityContext: sshd }], wsLabels);
      expect((await runResourcePolicy(podSecurityRestricted, asResource(otherContainer))).join("\n")).toMatch(/adding capability SETUID .*only an ssh-workspace's sshd/);
      const otherWorkload = deployment([{ name: "sshd", image: "x", securityContext: sshd }]);
      expect(await runResourcePolicy(podSecurityRestricted, asResource(otherWorkload))).toHaveLength(4);
    });
  });

  describe("RTE boundary", () => {
    const secretRef = (name: string, key = "token") => ({ valueFrom: { secretKeyRef: { name, key } } });
    /** The deprecated database-mode RTE as the components render it: DB_* from a Secret, RTE_REGISTER=0, no RTE_MODE. */
    const databaseRte = (extraEnv: Obj[] = []) => ({
      ...rteContainer(),
      env: [
        { name: "RTE_TOKEN", ...secretRef("keys", "rte-token") },
        { name: "DB_HOST", value: "mysql" },
        { name: "DB_PASSWORD", ...secretRef("db", "password") },
        { name: "RTE_REGISTER", value: "0" },
        ...extraEnv,
      ],
    });
    /** The app and an RTE in one pod, sharing the app's volume. */
    const sharedPod = (rteMounts: Obj[]) => {
      const pod = deployment([
        { ...appContainer([]), volumeMounts: [{ name: "persistent", mountPath: "/app/dist/persistent" }] },
        { ...rteContainer(), volumeMounts: rteMounts },
      ]);
      pod.spec.template.spec.volumes = [{ name: "persistent", persistentVolumeClaim: { claimName: "app" } }];
      return pod;
    };
    const playbookFolders = [
      { name: "persistent", mountPath: "/app/dist/persistent/playbooks", subPath: "playbooks" },
      { name: "persistent", mountPath: "/app/dist/persistent/repositories", subPath: "repositories" },
    ];

    it("passes a token-only RTE as uid 1000, one with its own metrics token, and the database-mode RTE as rendered", async () => {
      expect(await runResourcePolicy(rteBoundary, asResource(deployment([rteContainer()])))).toEqual([]);
      expect(await runResourcePolicy(rteBoundary, asResource(deployment([rteContainer([{ name: "METRICS_TOKEN", ...secretRef("rte-metrics") }])])))).toEqual([]);
      expect(await runResourcePolicy(rteBoundary, asResource(deployment([databaseRte()])))).toEqual([]);
    });
    it.each([
      ["a database password", rteContainer([{ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "p" } } }]), /must not hold DB_PASSWORD/],
      ["the encryption secret", rteContainer([{ name: "ENCRYPTION_SECRET", value: "x".repeat(32) }]), /must not hold ENCRYPTION_SECRET/],
      ["a literal token", { ...rteContainer(), env: [{ name: "RTE_MODE", value: "outbound" }, { name: "RTE_TOKEN", value: "literal-token-123456" }] }, /RTE_TOKEN must come from a Secret/],
      ["another uid", rteContainer([], { ...restrictedContainer(), runAsUser: 2000 }), /must run as uid 1000/],
      ["envFrom", { ...rteContainer(), envFrom: [{ secretRef: { name: "app-keys" } }] }, /must not use envFrom/],
      ["a literal METRICS_TOKEN", rteContainer([{ name: "METRICS_TOKEN", value: "a-literal-metrics-token" }]), /METRICS_TOKEN must come from a Secret of the RTE's own/],
      ["an unknown RTE_MODE", { ...rteContainer(), env: [{ name: "RTE_MODE", value: "sideways" }, { name: "RTE_TOKEN", ...secretRef("keys") }] }, /RTE_MODE "sideways" is unknown/],
      // No RTE_MODE is the database mode: checked, not skipped.
      ["a database-mode RTE with a literal DB_PASSWORD", { ...databaseRte(), env: databaseRte().env.map((e: Obj) => (e.name === "DB_PASSWORD" ? { name: "DB_PASSWORD", value: "x" } : e)) }, /DB_PASSWORD must come from a Secret/],
      ["a database-mode RTE with the encryption secret", databaseRte([{ name: "ENCRYPTION_SECRET", ...secretRef("keys", "encryption-secret") }]), /\(database\): must not hold ENCRYPTION_SECRET/],
      ["a database-mode RTE that registers itself", { ...databaseRte(), env: databaseRte().env.filter((e: Obj) => e.name !== "RTE_REGISTER") }, /must not register itself \(RTE_REGISTER=0/],
      ["an RTE known only by AF_ROLE (a custom image, no RTE_MODE)", { name: "runner", image: "registry.example.com/my-rte:1", env: [{ name: "AF_ROLE", value: "rte" }, { name: "DB_PASSWORD", value: "x" }], securityContext: { ...restrictedContainer(), runAsUser: 1000 } }, /"runner" \(database\).*DB_PASSWORD must come from a Secret/],
    ])("fires on %s", async (_name, container, message) => {
      const violations = await runResourcePolicy(rteBoundary, asResource(deployment([container], undefined, { runAsUser: undefined })));
      expect(violations.join("\n")).toMatch(message);
    });

    it("passes the playbook folders by subPath and the ssh folder read-only from the app's volume", async () => {
      const ok = sharedPod([...playbookFolders, { name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh", readOnly: true }]);
      expect(await runResourcePolicy(rteBoundary, asResource(ok))).toEqual([]);
    });
    it.each([
      ["the whole app volume", [{ name: "persistent", mountPath: "/app/dist/persistent" }], /mounts the whole of volume "persistent" at \/app\/dist\/persistent/],
      ["the whole app volume elsewhere", [{ name: "persistent", mountPath: "/data" }], /mounts the whole of volume "persistent" at \/data/],
      ["the app's ssh keys read-write", [{ name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh" }], /mounts ssh of the app's volume "persistent" read-write/],
    ])("fires on an RTE mounting %s", async (_name, mounts, message) => {
      expect((await runResourcePolicy(rteBoundary, asResource(sharedPod(mounts)))).join("\n")).toMatch(message);
    });
  });

  describe("an RTE's metrics token is its own", () => {
    const metrics = (secret: string) => ({ name: "METRICS_TOKEN", valueFrom: { secretKeyRef: { name: secret, key: "token" } } });
    const app = (secret: string) => deployment([appContainer([metrics(secret)])]);
    const remote = (secret: string) => ({ ...deployment([rteContainer([metrics(secret)])]), kind: "StatefulSet", metadata: { name: "remote-rte", namespace: "ns" } });
    it("passes an RTE whose METRICS_TOKEN comes from another Secret", async () => {
      expect(await runStackPolicy(rteOwnMetricsToken, [asResource(app("app-metrics")), asResource(remote("rte-metrics"))])).toEqual([]);
      expect(await runStackPolicy(rteOwnMetricsToken, [asResource(deployment([appContainer([metrics("app-metrics")]), rteContainer([metrics("rte-metrics")])]))])).toEqual([]);
    });
    it("fires on an RTE given the app's METRICS_TOKEN Secret, in the app's pod or elsewhere", async () => {
      expect(await runStackPolicy(rteOwnMetricsToken, [asResource(app("app-metrics")), asResource(remote("app-metrics"))])).toEqual([
        expect.stringMatching(/^StatefulSet ns\/remote-rte RTE container "rte": METRICS_TOKEN comes from the app's METRICS_TOKEN Secret app-metrics/),
      ]);
      const samePod = deployment([appContainer([metrics("app-metrics")]), rteContainer([metrics("app-metrics")])]);
      expect((await runStackPolicy(rteOwnMetricsToken, [asResource(samePod)])).join()).toMatch(/METRICS_TOKEN comes from the app's/);
    });
  });

  describe("seed credentials reference token variables only", () => {
    const seedMap = (text: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "seed", namespace: "ns" }, data: { "seed.yaml": text } });
    const seed = (token: string) => `runners:\n  items:\n  - name: rte\n    token: ${token}\n    type: rte\nversion: 1\n`;
    it("passes ${RTE_TOKEN} and a secretEnv token, and ignores other ConfigMaps", async () => {
      expect(await runResourcePolicy(seedCredentials, asResource(seedMap(seed("${RTE_TOKEN}"))))).toEqual([]);
      expect(await runResourcePolicy(seedCredentials, asResource(seedMap(seed("'${AWX_TOKEN}'"))))).toEqual([]);
      expect(await runResourcePolicy(seedCredentials, asResource({ ...seedMap("x: ${ENCRYPTION_SECRET}"), data: { "app.conf": "x: ${ENCRYPTION_SECRET}" } }))).toEqual([]);
    });
    it.each([
      ["the encryption secret", seed("${ENCRYPTION_SECRET}"), /references \$\{ENCRYPTION_SECRET\}; seed credentials may reference only token variables/],
      ["the database password", seed("${DB_PASSWORD}"), /references \$\{DB_PASSWORD\}/],
      ["the app's metrics token", seed("${METRICS_TOKEN}"), /references \$\{METRICS_TOKEN\}/],
      ["a literal", seed("abcdefghijklmnopqrstuvwxyz"), /token is a literal/],
    ])("fires on %s", async (_name, text, message) => {
      expect((await runResourcePolicy(seedCredentials, asResource(seedMap(text)))).join("\n")).toMatch(message);
    });
  });

  describe("CONNECT routes go only to static clusters", () => {
    it("passes a static outbound|22||fqdn route", async () => {
      expect(await runResourcePolicy(connectStaticClusters, asResource(envoyFilter([workspaceRoute(staticRoute)])))).toEqual([]);
    });
    it.each([
      ["a cluster header", { cluster_header: "x-target", timeout: "0s" }, /cluster_header|not a static/],
      ["an original destination cluster", { cluster: "original_dst_cluster" }, /original_dst/],
      ["a dynamic forward proxy cluster", { cluster: "dynamic_forward_proxy_cluster" }, /dynamic_forward_proxy/],
      ["a cluster that is not outbound|port||fqdn", { cluster: "outbound|22||*" }, /not a static outbound\|port\|\|fqdn cluster/],
    ])("fires on %s", async (_name, route, message) => {
      const violations = await runResourcePolicy(connectStaticClusters, asResource(envoyFilter([workspaceRoute(route)])));
      expect(violations.join("\n")).toMatch(message);
    });
  });

  describe("CONNECT only on the dedicated gateway, never on 80/443", () => {
    it("passes CONNECT on the dedicated gateway's port 2222", async () => {
      expect(await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([connectListener(2222), workspaceRoute(staticRoute)])))).toEqual([]);
    });
    it.each([80, 443, 8080, 8443])("fires on port %i", async (port) => {
      const violations = await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([connectListener(port)])));
      expect(violations.join("\n")).toMatch(new RegExp(`never enabled on port ${port}`));
    });
    it("fires on the shared ingress gateway, on no selector, and on sidecars", async () => {
      expect((await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([connectListener(2222)], { istio: "ingressgateway" })))).join()).toMatch(/shared istio=ingressgateway/);
      expect((await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([connectListener(2222)], {})))).join()).toMatch(/workloadSelector/);
      const sidecar = connectListener(2222);
      sidecar.match.context = "SIDECAR_INBOUND";
      expect((await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([sidecar])))).join()).toMatch(/never on sidecars/);
    });
  });

  describe("exec gateway RBAC", () => {
    it("passes a Role per namespace without wildcards", async () => {
      expect(await runResourcePolicy(execRbac, asResource(role("Role", execRules)))).toEqual([]);
    });
    it.each([
      ["verbs", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["*"] }]],
      ["resources", [{ apiGroups: [""], resources: ["*"], verbs: ["create"] }]],
      ["apiGroups", [{ apiGroups: ["*"], resources: ["pods"], verbs: ["get"] }]],
    ])("fires on a wildcard in %s", async (field, rules) => {
      const violations = await runResourcePolicy(execRbac, asResource(role("Role", rules)));
      expect(violations.join("\n")).toMatch(new RegExp(`wildcard in ${field}`));
    });
    it("fires on cluster-wide exec unless allowClusterWideExec is set", async () => {
      expect((await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)))).join()).toMatch(/grants create pods\/exec \(exec or its equivalent\) in every namespace/);
      expect(await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)), { allowClusterWideExec: true })).toEqual([]);
    });
    it.each([
      ["get pods/exec", { apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }],
      ["create pods/attach", { apiGroups: [""], resources: ["pods/attach"], verbs: ["create"] }],
      ["patch pods/ephemeralcontainers", { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }],
      ["create pods", { apiGroups: [""], resources: ["pods"], verbs: ["create"] }],
      ["create serviceaccounts/token", { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }],
    ])("fires on a cluster-wide role that grants %s (exec's equivalent), not on read-only pods", async (right, rule) => {
      const other = { ...role("ClusterRole", [rule]), metadata: { name: "ci" } };
      expect((await runResourcePolicy(execRbac, asResource(other))).join()).toContain(`grants ${right} (exec or its equivalent) in every namespace`);
      const readOnly = { ...role("ClusterRole", [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] }]), metadata: { name: "viewer" } };
      expect(await runResourcePolicy(execRbac, asResource(readOnly))).toEqual([]);
    });
    it("fires on any other role that grants exec with a wildcard", async () => {
      const other = { ...role("Role", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["*"] }]), metadata: { name: "debug", namespace: "x" } };
      expect((await runResourcePolicy(execRbac, asResource(other))).join()).toMatch(/wildcard in verbs/);
    });
  });

  describe("no exec into the exec gateway's own namespace", () => {
    const gateway = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "entryway-exec-gateway", namespace: "entryway", labels: { "app.kubernetes.io/name": "exec-gateway" } }, spec: {} };
    const binding = (namespace: string, roleRef: Obj) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "entryway-exec-gateway", namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
      subjects: [{ kind: "ServiceAccount", name: "entryway-exec-gateway", namespace: "entryway" }],
    });
    const roleIn = (namespace: string) => ({ ...role("Role", execRules), metadata: { ...role("Role", execRules).metadata, namespace } });
    it("passes exec bindings in other namespaces", async () => {
      const objects = [gateway, roleIn("team-a"), binding("team-a", { kind: "Role", name: "entryway-exec-gateway" })];
      expect(await runStackPolicy(noExecIntoGatewayNamespace, objects.map(asResource))).toEqual([]);
    });
    it("fires on a RoleBinding granting exec in the gateway's namespace, through its Role or a built-in ClusterRole", async () => {
      const own = [gateway, roleIn("entryway"), binding("entryway", { kind: "Role", name: "entryway-exec-gateway" })];
      expect((await runStackPolicy(noExecIntoGatewayNamespace, own.map(asResource))).join()).toMatch(/RoleBinding entryway\/entryway-exec-gateway: grants create pods\/exec in entryway, the exec gateway's own namespace/);
      const edit = [gateway, binding("entryway", { kind: "ClusterRole", name: "edit" })];
      expect((await runStackPolicy(noExecIntoGatewayNamespace, edit.map(asResource))).join()).toMatch(/the exec gateway's own namespace/);
      const view = [gateway, binding("entryway", { kind: "ClusterRole", name: "view" })];
      expect(await runStackPolicy(noExecIntoGatewayNamespace, view.map(asResource))).toEqual([]);
    });

    // A Role in `namespace` with `rules`, bound there.
    const grant = (namespace: string, rules: Obj[]) => [
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "ops", namespace }, rules },
      { ...binding(namespace, { kind: "Role", name: "ops" }), metadata: { name: "ops", namespace } },
    ];
    const workloadIn = (namespace: string, name: string) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `entryway-${name}`, namespace, labels: { "app.kubernetes.io/name": name } }, spec: {} });
    it.each([
      ["get pods/exec", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }]],
      ["create pods/attach", [{ apiGroups: [""], resources: ["pods/attach"], verbs: ["create"] }]],
      ["get pods/attach", [{ apiGroups: [""], resources: ["pods/attach"], verbs: ["get"] }]],
      ["patch pods/ephemeralcontainers", [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }]],
      ["update pods/ephemeralcontainers", [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["update"] }]],
      ["create pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }]],
      ["create serviceaccounts/token", [{ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }]],
      ["create pods/exec", [{ apiGroups: [""], resources: ["*/exec"], verbs: ["*"] }]],
      ["patch deployments (the exec gateway's Deployment)", [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"] }]],
      ["update deployments (the exec gateway's Deployment)", [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["update"], resourceNames: ["entryway-exec-gateway"] }]],
    ])("fires on %s in the exec gateway's namespace", async (right, rules) => {
      const violations = await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("entryway", rules)].map(asResource));
      expect(violations.join()).toContain(`RoleBinding entryway/ops: grants ${right}`);
      expect(violations.join()).toContain("in entryway, the exec gateway's own namespace");
    });
    it("fires on exec's equivalents in the CONNECT gateway's and AnsibleForms' namespaces and a Namespace the stack makes; not on read-only rights or another Deployment", async () => {
      const createPods = [{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }];
      const connect = await runStackPolicy(noExecIntoGatewayNamespace, [gateway, workloadIn("entryway-connect", "connect-gateway"), ...grant("entryway-connect", createPods)].map(asResource));
      expect(connect.join()).toMatch(/grants create pods in entryway-connect, the CONNECT gateway's namespace/);
      const app = await runStackPolicy(noExecIntoGatewayNamespace, [workloadIn("forms", "ansibleforms"), ...grant("forms", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }])].map(asResource));
      expect(app.join()).toMatch(/grants get pods\/exec in forms, AnsibleForms' namespace/);
      const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "quiet", labels: { "app.kubernetes.io/name": "entryway" } } };
      expect((await runStackPolicy(noExecIntoGatewayNamespace, [namespace, ...grant("quiet", createPods)].map(asResource))).join()).toMatch(/in quiet, a namespace the stack owns/);
      const harmless = [
        { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"], resourceNames: ["another-app"] },
        { apiGroups: [""], resources: ["pods/*"], verbs: ["get"] }, // no wildcard to RBAC: only "*" and "*" + "/exec" are
      ];
      expect(await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("entryway", harmless)].map(asResource))).toEqual([]);
      expect(await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("team-a", createPods)].map(asResource))).toEqual([]);
    });
  });

  describe("exec gateway roles add debug containers only with debug images", () => {
    const labels = { "app.kubernetes.io/name": "exec-gateway", "app.kubernetes.io/instance": "entryway" };
    const gatewayWith = (env: Obj[]) => ({ ...deployment([{ name: "gateway", image: "gw", env }], labels), metadata: { name: "entryway-exec-gateway", namespace: "entryway", labels } });
    const debugRole = { ...role("Role", [...execRules, { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }]), metadata: { name: "entryway-exec-gateway", namespace: "team-a", labels } };
    it("passes the role when the gateway names debug images, and a role without the grant", async () => {
      const images = [{ name: "ENTRYWAY_DEBUG_IMAGES", value: '["busybox:1.36"]' }];
      expect(await runStackPolicy(gatewayDebugRbac, [gatewayWith(images), debugRole].map(asResource))).toEqual([]);
      const plain = { ...debugRole, rules: execRules };
      expect(await runStackPolicy(gatewayDebugRbac, [gatewayWith([]), plain].map(asResource))).toEqual([]);
    });
    it("fires on the grant when the gateway has no (or an empty) allow-list", async () => {
      for (const env of [[], [{ name: "ENTRYWAY_DEBUG_IMAGES", value: "[]" }]]) {
        expect((await runStackPolicy(gatewayDebugRbac, [gatewayWith(env), debugRole].map(asResource))).join()).toMatch(/Role team-a\/entryway-exec-gateway: grants pods\/ephemeralcontainers, but its exec gateway has no debug images/);
      }
    });
  });

  describe("workspaces: a PDB each, no per-workspace LoadBalancer", () => {
    it("passes a workspace with its PDB and a ClusterIP Service", async () => {
      const service = { apiVersion: "v1", kind: "Service", metadata: { name: "ws-alice", namespace: "ns" }, spec: { type: "ClusterIP", selector: wsLabels } };
      expect(await runStackPolicy(workspacePdbNoLoadBalancer, [workspace(), pdb(wsLabels), service].map(asResource))).toEqual([]);
    });
    it("fires on a workspace without a PDB (or one selecting other pods)", async () => {
      expect((await runStackPolicy(workspacePdbNoLoadBalancer, [asResource(workspace())])).join()).toMatch(/needs a PodDisruptionBudget/);
      const other = pdb({ ...wsLabels, "app.kubernetes.io/component": "ws-bob" });
      expect((await runStackPolicy(workspacePdbNoLoadBalancer, [workspace(), other].map(asResource))).join()).toMatch(/needs a PodDisruptionBudget/);
    });
    it.each(["LoadBalancer", "NodePort"])("fires on a per-workspace %s Service", async (type) => {
      const service = { apiVersion: "v1", kind: "Service", metadata: { name: "ws-alice-lb", namespace: "ns" }, spec: { type, selector: wsLabels } };
      const violations = await runStackPolicy(workspacePdbNoLoadBalancer, [workspace(), pdb(wsLabels), service].map(asResource));
      expect(violations.join()).toMatch(new RegExp(`per-workspace ${type} Service`));
    });
  });

  describe("the default AnsibleForms admin password never appears", () => {
    const fromSecret = { name: "ADMIN_PASSWORD", valueFrom: { secretKeyRef: { name: "keys", key: "admin-password" } } };
    it("passes an app whose ADMIN_PASSWORD comes from a Secret", async () => {
      expect(await runResourcePolicy(noDefaultAdminPassword, asResource(deployment([appContainer([fromSecret])])))).toEqual([]);
    });
    it.each([
      ["in a Secret's stringData", { apiVersion: "v1", kind: "Secret", metadata: { name: "k", namespace: "ns" }, stringData: { "admin-password": DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD } }],
      ["base64 in a Secret's data", { apiVersion: "v1", kind: "Secret", metadata: { name: "k", namespace: "ns" }, data: { p: Buffer.from(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD).toString("base64") } }],
      ["in a ConfigMap", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "ns" }, data: { seed: `password: ${DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD}` } }],
    ])("fires on it %s", async (_name, object) => {
      expect((await runResourcePolicy(noDefaultAdminPassword, asResource(object))).join()).toMatch(/default AnsibleForms admin password/);
    });
    it("fires on an app without ADMIN_PASSWORD (the default applies) or with a literal one", async () => {
      expect((await runResourcePolicy(noDefaultAdminPassword, asResource(deployment([appContainer([])])))).join()).toMatch(/ADMIN_PASSWORD is unset/);
      const literal = deployment([appContainer([{ name: "ADMIN_PASSWORD", value: "something-else" }])]);
      expect((await runResourcePolicy(noDefaultAdminPassword, asResource(literal))).join()).toMatch(/must come from a Secret/);
    });
  });

  describe("AnsibleForms RTE on the app's tag (advisory)", () => {
    const remote = (image: string, env: Obj[] = []) => ({ ...deployment([{ ...rteContainer(env), image }]), kind: "StatefulSet", metadata: { name: "remote-rte", namespace: "ns" } });
    const app = deployment([appContainer([]), rteContainer()]);
    it("passes an app, its sidecar and a RemoteRte on one tag; a second cluster without the app has nothing to compare", async () => {
      expect(await runStackPolicy(rteTagMatchesApp, [asResource(app), asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-core:7.3.0"))])).toEqual([]);
      expect(await runStackPolicy(rteTagMatchesApp, [asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-full:7.2.0"))])).toEqual([]);
    });
    it("fires on a RemoteRte of another release, and on a custom image (known by RTE_MAX_JOBS) of another tag", async () => {
      const lagging = await runStackPolicy(rteTagMatchesApp, [asResource(app), asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-full:7.2.0"))]);
      expect(lagging).toEqual([expect.stringMatching(/^StatefulSet ns\/remote-rte container "rte": RTE tag 7\.2\.0 differs from the AnsibleForms app's \(7\.3\.0\)/)]);
      const custom = await runStackPolicy(rteTagMatchesApp, [asResource(app), asResource(remote("registry.example.com/team/my-rte:1.0", [{ name: "RTE_MAX_JOBS", value: "2" }]))]);
      expect(custom.join()).toMatch(/RTE tag 1\.0 differs/);
    });
  });

  describe("a Secret-reading role sits where no other Secret lives", () => {
    const secret = (name: string, namespace: string, type = "Opaque") => ({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, type });
    const reader = (namespace: string, rule: Obj = {}) => ({
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "gw-sds", namespace },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch", "list"], ...rule }],
    });
    const gateway = (namespace: string, credentialName: string) => ({
      apiVersion: "networking.istio.io/v1", kind: "Gateway", metadata: { name: "gw", namespace },
      spec: { selector: { app: "gw" }, servers: [{ port: { number: 2222, name: "connect", protocol: "HTTPS" }, hosts: ["*"], tls: { mode: "SIMPLE", credentialName } }] },
    });
    it("passes the gateway's Role beside only the certificate its Gateway serves, and other Secrets elsewhere", async () => {
      const objects = [reader("edge"), gateway("edge", "cert"), secret("cert", "edge", "kubernetes.io/tls"), secret("app-keys", "apps")];
      expect(await runStackPolicy(secretReadersAlone, objects.map(asResource))).toEqual([]);
    });
    it("fires on the old layout: a TLS CONNECT gateway in the namespace of other Secrets (the app's keys)", async () => {
      const { resources } = await render(() => {
        const gw = new ConnectGateway("entryway", { namespace: "apps", tls: { credentialName: "cert" } });
        new k8s.core.v1.Secret("keys", { metadata: { name: "entryway-ansibleforms-keys", namespace: "apps" }, stringData: { k: "v" } }, { parent: gw });
      });
      const violations = await runStackPolicy(secretReadersAlone, resources.filter((r) => r.custom).map((r) => ({ type: r.type, props: r.inputs })));
      expect(violations).toEqual([expect.stringMatching(/^Role apps\/entryway-connect-gateway-sds: may read Secrets where Secret apps\/entryway-ansibleforms-keys lives/)]);
    });
    it("fires on a named Secret, a ClusterRole bound in the namespace, and a ClusterRoleBinding (every namespace)", async () => {
      const named = await runStackPolicy(secretReadersAlone, [reader("edge", { resourceNames: ["other"] }), secret("other", "edge"), secret("unnamed", "edge")].map(asResource));
      expect(named).toEqual([expect.stringMatching(/Secret edge\/other lives/)]);
      const clusterRole = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "read-secrets" }, rules: [{ apiGroups: [""], resources: ["*"], verbs: ["list"] }] };
      const binding = (kind: string, namespace?: string) => ({ apiVersion: "rbac.authorization.k8s.io/v1", kind, metadata: { name: "b", ...(namespace ? { namespace } : {}) }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "read-secrets" }, subjects: [] });
      expect((await runStackPolicy(secretReadersAlone, [clusterRole, binding("RoleBinding", "edge"), secret("x", "edge"), secret("y", "apps")].map(asResource))).join("\n")).toMatch(/^RoleBinding edge\/b \(ClusterRole read-secrets\): may read Secrets where Secret edge\/x lives[^\n]*$/);
      expect(await runStackPolicy(secretReadersAlone, [clusterRole, binding("ClusterRoleBinding"), secret("y", "apps")].map(asResource))).toHaveLength(1);
      // Writing Secrets is not reading them.
      expect(await runStackPolicy(secretReadersAlone, [reader("edge", { verbs: ["create"] }), secret("x", "edge")].map(asResource))).toEqual([]);
    });
  });
});
