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
  noDefaultAdminPassword,
  podSecurityRestricted,
  rteBoundary,
  rteTagMatchesApp,
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
  it("has the nine rules, each with a description; all mandatory but the RTE tag advice", () => {
    expect(entrywayPolicies.map((p) => p.name)).toEqual([
      "entryway-pod-security-restricted",
      "entryway-rte-boundary",
      "entryway-connect-static-clusters",
      "entryway-connect-dedicated-gateway",
      "entryway-exec-rbac",
      "entryway-workspace-pdb-no-loadbalancer",
      "entryway-no-default-admin-password",
      "entryway-rte-tag-matches-app",
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
    it("passes a token-only RTE as uid 1000", async () => {
      expect(await runResourcePolicy(rteBoundary, asResource(deployment([rteContainer()])))).toEqual([]);
    });
    it.each([
      ["a database password", rteContainer([{ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "p" } } }]), /must not hold DB_PASSWORD/],
      ["the encryption secret", rteContainer([{ name: "ENCRYPTION_SECRET", value: "x".repeat(32) }]), /must not hold ENCRYPTION_SECRET/],
      ["a literal token", { ...rteContainer(), env: [{ name: "RTE_MODE", value: "outbound" }, { name: "RTE_TOKEN", value: "literal-token-123456" }] }, /RTE_TOKEN must come from a Secret/],
      ["another uid", rteContainer([], { ...restrictedContainer(), runAsUser: 2000 }), /must run as uid 1000/],
      ["envFrom", { ...rteContainer(), envFrom: [{ secretRef: { name: "app-keys" } }] }, /must not use envFrom/],
    ])("fires on %s", async (_name, container, message) => {
      const violations = await runResourcePolicy(rteBoundary, asResource(deployment([container], undefined, { runAsUser: undefined })));
      expect(violations.join("\n")).toMatch(message);
    });
    it("leaves the deprecated database-mode RTE (no RTE_MODE) alone", async () => {
      const legacy = { ...rteContainer([{ name: "DB_PASSWORD", value: "x" }]), env: [{ name: "DB_PASSWORD", value: "x" }] };
      expect(await runResourcePolicy(rteBoundary, asResource(deployment([legacy])))).toEqual([]);
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
      expect((await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)))).join()).toMatch(/grants pods\/exec in every namespace/);
      expect(await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)), { allowClusterWideExec: true })).toEqual([]);
    });
    it("fires on any other role that grants exec with a wildcard", async () => {
      const other = { ...role("Role", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["*"] }]), metadata: { name: "debug", namespace: "x" } };
      expect((await runResourcePolicy(execRbac, asResource(other))).join()).toMatch(/wildcard in verbs/);
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
