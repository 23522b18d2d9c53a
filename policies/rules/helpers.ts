/**
 * What the Entryway policy rules share: the Kubernetes object a resource's inputs describe, how to
 * find a workload's pod and containers, how to know an AnsibleForms app or RTE container, how to
 * read RBAC rules, and the wrappers that make a pure check a CrossGuard policy. Each rule is a file
 * of its own beside this one (see index.ts); only what two or more of them use lives here.
 */
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";

/** A Kubernetes object as a resource's inputs describe it. */
export interface K8sObject {
  apiVersion?: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Settings of the pack (set per stack in the policy config). */
export interface EntrywayPolicyConfig {
  /** Allow a ClusterRole that grants pods/exec (the exec gateway's clusterWide: true). */
  allowClusterWideExec?: boolean;
}

export const WORKLOAD_KINDS = ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"];

/** Kind from a Pulumi Kubernetes type token ("kubernetes:apps/v1:Deployment"), or from the inputs. */
export function toObject(type: string, props: Record<string, unknown>): K8sObject | undefined {
  if (!type.startsWith("kubernetes:")) return undefined;
  const kind = (props.kind as string | undefined) ?? type.split(":")[2];
  return { ...props, kind } as K8sObject;
}

/** How a violation names an object: `Kind namespace/name`. */
export const label = (o: K8sObject) =>
  `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name ?? "(unnamed)"}`;

/** The pod template (or pod spec holder) of a workload. */
export function podTemplate(o: K8sObject): { metadata?: Obj; spec?: Obj } | undefined {
  const spec = o.spec as Obj | undefined;
  switch (o.kind) {
    case "Pod":
      return { metadata: o.metadata, spec };
    case "CronJob":
      return spec?.jobTemplate?.spec?.template;
    default:
      return WORKLOAD_KINDS.includes(o.kind) ? spec?.template : undefined;
  }
}

export function containersOf(pod: Obj | undefined): Obj[] {
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? []), ...(pod?.ephemeralContainers ?? [])];
}

// ---------------------------------------------------------------------------------------------
// AnsibleForms containers (rte-boundary, rte-own-metrics-token, rte-tag-matches-app)

/**
 * An AnsibleForms RTE container, whatever its mode (RTE_MODE is absent in the deprecated database
 * mode): a published layer's image (ghcr.io/ansibleforms/ansibleforms-rte-<flavour>), AF_ROLE=rte
 * (the role upstream's RTE image sets: server/src/runners/README.md, "Configuration"), or
 * RTE_MAX_JOBS, which only an RTE reads (a custom image).
 */
export function isRteContainer(container: Obj): boolean {
  const env: Obj[] = container.env ?? [];
  return (
    /ansibleforms-rte-/.test(container.image ?? "") ||
    env.some((e) => (e.name === "AF_ROLE" && e.value === "rte") || e.name === "RTE_MAX_JOBS")
  );
}

/** The AnsibleForms app container: its image, or ADMIN_USERNAME (only the app reads it). */
export function isAppContainer(container: Obj): boolean {
  return (
    !isRteContainer(container) &&
    (/ansibleforms\/ansibleforms(:|@|$)/.test(container.image ?? "") ||
      (container.env ?? []).some((e: Obj) => e.name === "ADMIN_USERNAME"))
  );
}

/** Every AnsibleForms container of the workloads, in order, with its workload: an RTE (`rte`) or the app. */
export function ansibleFormsContainers(objects: K8sObject[]): { object: K8sObject; container: Obj; rte: boolean }[] {
  return objects.flatMap((object) =>
    containersOf(podTemplate(object)?.spec)
      .filter((container) => isRteContainer(container) || isAppContainer(container))
      .map((container) => ({ object, container, rte: isRteContainer(container) })),
  );
}

// ---------------------------------------------------------------------------------------------
// RBAC (exec-rbac, no-exec-into-gateway-namespace)

/**
 * The rights that amount to running code in a namespace's pods, and so to their service-account
 * tokens:
 * - exec and attach, with `create` or `get` (a WebSocket upgrade is a GET, authorized as `get`
 *   until Kubernetes 1.35 also asks for `create`: the AuthorizePodWebsocketUpgradeCreatePermission
 *   gate, KEP-4006, kubernetes/kubernetes#133515);
 * - adding an ephemeral container (what kubectl debug patches), and patching or updating a pod (a
 *   running pod's image may be changed: k8s.io/kubernetes pkg/apis/core/validation/validation.go,
 *   ValidatePodUpdate, which allows spec.containers[*].image);
 * - creating a pod, or creating or changing a workload that makes pods (Deployment, ReplicaSet,
 *   StatefulSet, DaemonSet, Job, CronJob, ReplicationController): the pod template may run as any
 *   ServiceAccount of the namespace (https://kubernetes.io/docs/concepts/security/rbac-good-practices/,
 *   "Workload creation");
 * - creating a ServiceAccount token;
 * - the kubelet's API through the API server's node proxy (nodes/proxy: `get`, and `create` for a
 *   POST, runs /exec in any pod of the node; the same page, "Access to proxy subresource of Nodes");
 * - impersonating a user, group or ServiceAccount, and `bind` or `escalate` on roles (a role with
 *   any of the above, or a binding to one: the same page, "Escalate verb", "Bind verb",
 *   "Impersonate verb").
 */
const EXEC_EQUIVALENT: { group: string; resource: string; verbs: string[] }[] = [
  { group: "", resource: "pods/exec", verbs: ["create", "get"] },
  { group: "", resource: "pods/attach", verbs: ["create", "get"] },
  { group: "", resource: "pods/ephemeralcontainers", verbs: ["patch", "update"] },
  { group: "", resource: "pods", verbs: ["create", "patch", "update"] },
  ...["deployments", "replicasets", "statefulsets", "daemonsets"].map((resource) => ({
    group: "apps",
    resource,
    verbs: ["create", "patch", "update"],
  })),
  ...["jobs", "cronjobs"].map((resource) => ({ group: "batch", resource, verbs: ["create", "patch", "update"] })),
  { group: "", resource: "replicationcontrollers", verbs: ["create", "patch", "update"] },
  { group: "", resource: "serviceaccounts/token", verbs: ["create"] },
  { group: "", resource: "nodes/proxy", verbs: ["create", "get"] },
  ...["users", "groups", "serviceaccounts"].map((resource) => ({ group: "", resource, verbs: ["impersonate"] })),
  ...["roles", "clusterroles"].map((resource) => ({
    group: "rbac.authorization.k8s.io",
    resource,
    verbs: ["bind", "escalate"],
  })),
];

/**
 * Whether a rule's resource names `wanted` ("pods" or "pods/exec") as RBAC reads it: exactly, as
 * "*" (every resource and subresource), or as "*" + "/exec" (that subresource of every resource);
 * "pods/*" is no wildcard there (kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go,
 * ResourceMatches).
 */
function resourceMatches(ruleResource: string, wanted: string): boolean {
  const subresource = wanted.split("/")[1];
  return (
    ruleResource === "*" ||
    ruleResource === wanted ||
    (subresource !== undefined && ruleResource === `*/${subresource}`)
  );
}

/** The rights a rule gives on `resource` of `apiGroup` among `verbs` ("verb resource", wildcards as RBAC reads them). */
export function grantsOn(rule: Obj, apiGroup: string, resource: string, verbs: string[]): string[] {
  if (!(rule.apiGroups ?? []).some((g: string) => g === apiGroup || g === "*")) return [];
  if (!(rule.resources ?? []).some((r: string) => resourceMatches(r, resource))) return [];
  const ruleVerbs: string[] = rule.verbs ?? [];
  return verbs
    .filter((verb) => ruleVerbs.includes(verb) || ruleVerbs.includes("*"))
    .map((verb) => `${verb} ${resource}`);
}

/** The exec-equivalent rights (EXEC_EQUIVALENT) RBAC rules grant, as "verb resource". */
export const execRightsIn = (rules: Obj[]): string[] => [
  ...new Set(
    rules.flatMap((rule) =>
      EXEC_EQUIVALENT.flatMap(({ group, resource, verbs }) => grantsOn(rule, group, resource, verbs)),
    ),
  ),
];

const BOOTSTRAP = { "kubernetes.io/bootstrapping": "rbac-defaults" };
/**
 * The built-in ClusterRoles that grant exec or its equivalent (EXEC_EQUIVALENT), with their labels
 * (an aggregationRule that selects one aggregates its rights), as Kubernetes v1.37.2 makes them:
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (ClusterRoles: every role labelled
 * kubernetes.io/bootstrapping=rbac-defaults; editRules, aggregated into edit and from there into
 * admin, holds pods/exec, pods/attach, writing pods, deployments, jobs and cronjobs,
 * serviceaccounts/token and impersonating serviceaccounts; system:node creates pods and tokens;
 * system:kube-controller-manager creates tokens; system:kubelet-api-admin has nodes/proxy) and
 * controller_policy.go (ControllerRoles: the controllers that create pods or workloads, the
 * garbage collector and the storage version migrator that patch every resource, the namespace
 * controller that may get every resource, pods/exec and nodes/proxy among them, and the
 * aggregation controller that escalates). test/real/rbac-builtin.test.ts checks the list against
 * the ClusterRoles a real API server makes.
 */
export const BUILTIN_EXEC_CLUSTER_ROLES: Record<string, Record<string, string>> = {
  "cluster-admin": BOOTSTRAP,
  admin: BOOTSTRAP,
  edit: { ...BOOTSTRAP, "rbac.authorization.k8s.io/aggregate-to-admin": "true" },
  "system:aggregate-to-edit": { ...BOOTSTRAP, "rbac.authorization.k8s.io/aggregate-to-edit": "true" },
  "system:node": BOOTSTRAP,
  "system:kube-controller-manager": BOOTSTRAP,
  "system:kubelet-api-admin": BOOTSTRAP,
  ...Object.fromEntries(
    [
      "clusterrole-aggregation-controller",
      "cronjob-controller",
      "daemon-set-controller",
      "deployment-controller",
      "generic-garbage-collector",
      "job-controller",
      "namespace-controller",
      "persistent-volume-binder",
      "replicaset-controller",
      "replication-controller",
      "statefulset-controller",
      "storage-version-migrator-controller",
    ].map((name) => [`system:controller:${name}`, BOOTSTRAP]),
  ),
};
/**
 * Built-in ClusterRoles the same files make without any of those rights, which a binding may name.
 * system:aggregate-to-admin writes roles and rolebindings, but RBAC lets no one grant through them
 * what they do not hold themselves without `bind` or `escalate` (k8s.io/kubernetes
 * pkg/registry/rbac/rolebinding/policybased/storage.go, pkg/registry/rbac/validation/rule.go
 * ConfirmNoEscalation).
 */
export const BUILTIN_OTHER_CLUSTER_ROLES = [
  "view",
  "system:aggregate-to-view",
  "system:aggregate-to-admin",
  "system:auth-delegator",
  "system:basic-user",
  "system:discovery",
  "system:public-info-viewer",
  "system:monitoring",
  "system:heapster",
  "system:kube-aggregator",
  "system:kube-dns",
  "system:node-proxier",
  "system:node-problem-detector",
  "system:persistent-volume-provisioner",
  "system:volume-scheduler",
  "system:kube-scheduler",
  "system:service-account-issuer-discovery",
];

/** Whether a label selector (matchLabels, matchExpressions) selects `labels`; an empty one selects all. */
export function selects(selector: Obj, labels: Record<string, string>): boolean {
  const matchLabels: Record<string, string> = selector.matchLabels ?? {};
  if (!Object.entries(matchLabels).every(([key, value]) => labels[key] === value)) return false;
  return ((selector.matchExpressions ?? []) as Obj[]).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case "In":
        return key in labels && values.includes(labels[key]);
      case "NotIn":
        return !(key in labels) || !values.includes(labels[key]);
      case "Exists":
        return key in labels;
      case "DoesNotExist":
        return !(key in labels);
      default:
        return false;
    }
  });
}

/** The built-in exec ClusterRoles an aggregationRule selects (its rules are theirs, kept so by the aggregation controller). */
export const builtinExecAggregated = (role: K8sObject): string[] =>
  (((role.aggregationRule as Obj | undefined)?.clusterRoleSelectors ?? []) as Obj[]).flatMap((selector) =>
    Object.entries(BUILTIN_EXEC_CLUSTER_ROLES)
      .filter(([, labels]) => selects(selector, labels))
      .map(([name]) => name),
  );

// ---------------------------------------------------------------------------------------------
// The CrossGuard wrappers

/** A policy over one resource at a time. */
export function resourcePolicy(
  name: string,
  description: string,
  enforcementLevel: ResourceValidationPolicy["enforcementLevel"],
  check: (o: K8sObject, config: EntrywayPolicyConfig) => string[],
  configSchema?: ResourceValidationPolicy["configSchema"],
): ResourceValidationPolicy {
  return {
    name,
    description,
    enforcementLevel,
    ...(configSchema ? { configSchema } : {}),
    validateResource: (args, reportViolation) => {
      const object = toObject(args.type, args.props);
      if (!object) return;
      const config = configSchema ? args.getConfig<EntrywayPolicyConfig>() : {};
      for (const problem of check(object, config)) reportViolation(problem);
    },
  };
}

/** A policy over the whole stack's objects (for rules that relate objects to each other). */
export function stackPolicy(
  name: string,
  description: string,
  enforcementLevel: StackValidationPolicy["enforcementLevel"],
  check: (objects: K8sObject[]) => string[],
): StackValidationPolicy {
  return {
    name,
    description,
    enforcementLevel,
    validateStack: (args, reportViolation) => {
      const objects = args.resources
        .map((r) => toObject(r.type, r.props))
        .filter((o): o is K8sObject => o !== undefined);
      for (const problem of check(objects)) reportViolation(problem);
    },
  };
}
