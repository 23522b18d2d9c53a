/**
 * The fixtures the policy rules' tests share (policies/rules/<rule>.test.ts): good Kubernetes
 * objects, which each rule's tests make bad one way at a time. What only one rule's tests use stays
 * in its test file.
 */

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const restrictedContainer = () => ({
  allowPrivilegeEscalation: false,
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
});

export function deployment(
  containers: Obj[],
  labels: Record<string, string> = { "app.kubernetes.io/name": "demo" },
  podContext: Obj = {},
): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "demo", namespace: "ns", labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            seccompProfile: { type: "RuntimeDefault" },
            ...podContext,
          },
          containers,
        },
      },
    },
  };
}

export const rteContainer = (
  extraEnv: Obj[] = [],
  securityContext: Obj = { ...restrictedContainer(), runAsUser: 1000 },
) => ({
  name: "rte",
  image: "ghcr.io/ansibleforms/ansibleforms-rte-full:7.3.0",
  env: [
    { name: "RTE_MODE", value: "inbound" },
    { name: "RTE_TOKEN", valueFrom: { secretKeyRef: { name: "keys", key: "rte-token" } } },
    ...extraEnv,
  ],
  securityContext,
});

export function envoyFilter(
  patches: Obj[],
  selector: Record<string, string> = { "app.kubernetes.io/name": "connect-gateway" },
): Obj {
  return {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "f", namespace: "ns" },
    spec: { workloadSelector: { labels: selector }, configPatches: patches },
  };
}
export const connectListener = (port: number) => ({
  applyTo: "NETWORK_FILTER",
  match: {
    context: "GATEWAY",
    listener: { portNumber: port, filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } },
  },
  patch: { operation: "MERGE", value: { typed_config: { upgrade_configs: [{ upgrade_type: "CONNECT" }] } } },
});
export const workspaceRoute = (route: Obj) => ({
  applyTo: "VIRTUAL_HOST",
  match: { context: "GATEWAY", routeConfiguration: { portNumber: 2222, name: "http.2222" } },
  patch: {
    operation: "ADD",
    value: { name: "ws", domains: ["ws.ns.svc.cluster.local:22"], routes: [{ match: { connect_matcher: {} }, route }] },
  },
});
export const staticRoute = {
  cluster: "outbound|22||ws.ns.svc.cluster.local",
  timeout: "0s",
  upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
};

export const role = (kind: "Role" | "ClusterRole", rules: Obj[]) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: {
    name: "entryway-exec-gateway",
    ...(kind === "Role" ? { namespace: "team-a" } : {}),
    labels: { "app.kubernetes.io/name": "exec-gateway" },
  },
  rules,
});
export const execRules = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
];

export const wsLabels = {
  "app.kubernetes.io/name": "ssh-workspace",
  "app.kubernetes.io/instance": "entryway",
  "app.kubernetes.io/component": "ws-alice",
};
export const appContainer = (env: Obj[]) => ({
  name: "app",
  image: "ghcr.io/ansibleforms/ansibleforms:7.3.0",
  env,
  securityContext: restrictedContainer(),
});
