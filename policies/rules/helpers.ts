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

// ---------------------------------------------------------------------------------------------
// RBAC (exec-rbac, no-exec-into-gateway-namespace)

/**
 * The rights that amount to running code in a namespace's pods, and so to their service-account
 * tokens: exec and attach, with `create` or `get` (a WebSocket upgrade is a GET, authorized as `get`
 * until Kubernetes 1.35 also asks for `create`: the AuthorizePodWebsocketUpgradeCreatePermission
 * gate, KEP-4006, kubernetes/kubernetes#133515); adding an ephemeral container (what kubectl debug
 * patches); creating a pod (it may run as any ServiceAccount of the namespace); and creating a
 * ServiceAccount token.
 */
const EXEC_EQUIVALENT: { resource: string; verbs: string[] }[] = [
  { resource: "pods/exec", verbs: ["create", "get"] },
  { resource: "pods/attach", verbs: ["create", "get"] },
  { resource: "pods/ephemeralcontainers", verbs: ["patch", "update"] },
  { resource: "pods", verbs: ["create"] },
  { resource: "serviceaccounts/token", verbs: ["create"] },
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
    rules.flatMap((rule) => EXEC_EQUIVALENT.flatMap(({ resource, verbs }) => grantsOn(rule, "", resource, verbs))),
  ),
];

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
