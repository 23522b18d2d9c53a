/**
 * The facts the exec gateway's two front ends share: its image, ports, paths, mount points and RBAC
 * rules. The component reads them here; scripts/generate-contract.ts writes them into the chart's
 * files/contract.json, which the templates read.
 */
import type { ImageSettings } from "../shared/image";

/** The gateway image the chart and the component deploy unless told otherwise. @internal */
export const EXEC_GATEWAY_IMAGE: ImageSettings = {
  registry: "ghcr.io",
  repository: "entryway/exec-gateway",
  tag: "0.1.0",
};
/** The port the gateway listens on inside its pod (the service's ENTRYWAY_PORT). @internal */
export const EXEC_GATEWAY_PORT = 8080;
/** The port of /metrics and /readyz (the service's ENTRYWAY_METRICS_PORT), open only to the monitoring namespace. @internal */
export const EXEC_GATEWAY_METRICS_PORT = 9090;
/** The WebSocket endpoint's path (the service's default). @internal */
export const EXEC_GATEWAY_PATH = "/v1/enter";
/**
 * What exposure routes to the gateway: the WebSocket endpoint and the web terminal (its page at /,
 * its assets under /web/). Nothing else of the public port leaves the cluster.
 * @internal
 */
export const EXEC_GATEWAY_PUBLIC_PATHS = [
  { path: EXEC_GATEWAY_PATH, match: "exact" },
  { path: "/", match: "exact" },
  { path: "/web/", match: "prefix" },
] as const;
/** Routed too when the gateway records: reviewers list and download recordings there, and replay them on /replay. @internal */
export const EXEC_GATEWAY_RECORDING_PATHS = [
  { path: "/v1/recordings", match: "prefix" },
  { path: "/replay", match: "exact" },
] as const;

/** Proxies between a client and the gateway when exposure routes it: the ingress gateway or controller. @internal */
export const EXPOSURE_PROXY_HOPS = 1;

/** Where the recordings volume is mounted in the gateway's pod (the document's recordDir). @internal */
export const EXEC_GATEWAY_RECORD_DIR = "/var/lib/entryway/recordings";
/** Where the settings ConfigMap is mounted, read-only, in the gateway's pod; ENTRYWAY_CONFIG names its file. @internal */
export const EXEC_GATEWAY_CONFIG_DIR = "/etc/entryway";
/** The settings document's key in the ConfigMap, and so its file name. @internal */
export const EXEC_GATEWAY_CONFIG_FILE = "config.json";
/** Where the CA bundle (caBundle or existingCaConfigMap) is mounted, read-only; NODE_EXTRA_CA_CERTS names its file. @internal */
export const EXEC_GATEWAY_CA_DIR = "/etc/entryway-ca";
/** The CA bundle's file name there (and its key in the ConfigMap the component makes for caBundle). @internal */
export const EXEC_GATEWAY_CA_FILE = "ca.crt";

/**
 * The RBAC rules for entering pods: exec, and reading what a target resolves through (a workload
 * instance is found through ownership: a Deployment's ReplicaSets, then their pods).
 * pods/exec needs both `get` and `create`: the gateway's exec is a WebSocket upgrade, a GET, which the
 * API server authorizes as verb `get`, and since Kubernetes 1.35 it also checks `create` on the same
 * subresource (kubernetes pkg/registry/core/pod/rest/subresources.go, ExecREST.Connect, feature gate
 * AuthorizePodWebsocketUpgradeCreatePermission, beta and on by default from 1.35; kubernetes#133515).
 * With `create` alone the real API server answers 403 (test/real/kubernetes-authorizer.test.ts).
 * @internal
 */
export const EXEC_RULES = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/exec"], verbs: ["get", "create"] },
  { apiGroups: ["apps"], resources: ["deployments", "statefulsets"], verbs: ["get"] },
  { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["list"] },
];
/** Added to EXEC_RULES only with debugContainers: adding an ephemeral container (what kubectl debug patches). @internal */
export const DEBUG_RULE = { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] };
/** The Kubernetes authorizer's rules: TokenReview and SubjectAccessReview. @internal */
export const REVIEW_RULES = [
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];
