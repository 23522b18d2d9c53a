/**
 * The Entryway policy rules, as pure functions over Kubernetes objects (what a resource's inputs
 * say, kind and all), wrapped as CrossGuard policies for the pack in index.ts. Tests call the
 * checks and the wrapped policies' validate callbacks directly, without the Pulumi CLI.
 */
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";

/** A Kubernetes object as a resource's inputs describe it. */
export interface K8sObject {
  apiVersion?: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Settings of the pack (set per stack in the policy config). */
export interface EntrywayPolicyConfig {
  /** Allow a ClusterRole that grants pods/exec (the exec gateway's clusterWide: true). */
  allowClusterWideExec?: boolean;
}

/** The upstream default AnsibleForms admin password: it must never be deployed. */
export const DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD = "AnsibleForms!123";

/**
 * The documented Pod Security exception for sshd: a container named "sshd" in a workload labelled
 * app.kubernetes.io/name=ssh-workspace may add back these capabilities (a multi-user sshd that
 * switches users needs them). Everything else of "restricted" still applies to it.
 */
export const SSHD_EXCEPTION_CAPABILITIES = ["AUDIT_WRITE", "SETGID", "SETUID", "SYS_CHROOT"];
/** Pod Security "restricted" allows adding only this capability. */
const RESTRICTED_ADD = ["NET_BIND_SERVICE"];

/** The CONNECT ports Istio's shared ingress uses for plain web traffic (service and target ports). */
export const FORBIDDEN_CONNECT_PORTS = [80, 443, 8080, 8443];
/** A static Istio outbound cluster: outbound|<port>||<fqdn>. */
const STATIC_CLUSTER = /^outbound\|\d{1,5}\|\|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const OPEN_PROXY_MARKERS = [/dynamic_forward_proxy/i, /original_dst/i, /ORIGINAL_DST/, /cluster_header/i, /clusterHeader/];

/** The volume types Pod Security "restricted" allows. */
const RESTRICTED_VOLUME_TYPES = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];
/** The sysctls Pod Security "baseline" (and so "restricted") allows. */
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
];
const podContextOf = (pod: Obj): Obj => pod.securityContext ?? {};

const WORKLOAD_KINDS = ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"];

/** Kind from a Pulumi Kubernetes type token ("kubernetes:apps/v1:Deployment"), or from the inputs. */
export function toObject(type: string, props: Record<string, unknown>): K8sObject | undefined {
  if (!type.startsWith("kubernetes:")) return undefined;
  const kind = (props.kind as string | undefined) ?? type.split(":")[2];
  return { ...props, kind } as K8sObject;
}

const label = (o: K8sObject) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name ?? "(unnamed)"}`;

/** The pod template (or pod spec holder) of a workload. */
function podTemplate(o: K8sObject): { metadata?: Obj; spec?: Obj } | undefined {
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

function containersOf(pod: Obj | undefined): Obj[] {
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? []), ...(pod?.ephemeralContainers ?? [])];
}

// ---------------------------------------------------------------------------------------------
// 1. Pod Security "restricted"

export function checkPodSecurityRestricted(o: K8sObject): string[] {
  const template = podTemplate(o);
  if (!template) return [];
  const pod = template.spec ?? {};
  const problems: string[] = [];
  const where = label(o);
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (pod[field] === true) problems.push(`${where}: ${field} is not allowed`);
  }
  for (const volume of pod.volumes ?? []) {
    if (volume.hostPath) problems.push(`${where}: hostPath volume "${volume.name}" is not allowed`);
    else {
      const kinds = Object.keys(volume).filter((key) => key !== "name");
      for (const kind of kinds) {
        if (!RESTRICTED_VOLUME_TYPES.includes(kind)) problems.push(`${where}: volume "${volume.name}" of type ${kind} is not allowed under "restricted"`);
      }
    }
  }
  for (const sysctl of podContextOf(pod).sysctls ?? []) {
    if (!SAFE_SYSCTLS.includes(sysctl.name)) problems.push(`${where}: sysctl ${sysctl.name} is not allowed`);
  }
  const podContext = pod.securityContext ?? {};
  if (podContext.runAsUser === 0) problems.push(`${where}: the pod runs as root (runAsUser 0)`);
  const isSshWorkspace =
    template.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace" || o.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace";
  for (const container of containersOf(pod)) {
    const c = container.securityContext ?? {};
    const name = `${where} container "${container.name}"`;
    if (c.privileged === true) problems.push(`${name}: privileged is not allowed`);
    if (c.allowPrivilegeEscalation !== false) problems.push(`${name}: allowPrivilegeEscalation must be false`);
    if (c.runAsNonRoot !== true && podContext.runAsNonRoot !== true) problems.push(`${name}: runAsNonRoot must be true`);
    if (c.runAsUser === 0) problems.push(`${name}: runs as root (runAsUser 0)`);
    if (c.procMount && c.procMount !== "Default") problems.push(`${name}: procMount ${c.procMount} is not allowed`);
    for (const port of container.ports ?? []) {
      if (port.hostPort) problems.push(`${name}: hostPort ${port.hostPort} is not allowed`);
    }
    const seccomp = c.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") problems.push(`${name}: seccompProfile must be RuntimeDefault or Localhost`);
    const drop: string[] = c.capabilities?.drop ?? [];
    if (!drop.includes("ALL")) problems.push(`${name}: capabilities must drop ALL`);
    const allowed = isSshWorkspace && container.name === "sshd" ? [...RESTRICTED_ADD, ...SSHD_EXCEPTION_CAPABILITIES] : RESTRICTED_ADD;
    for (const cap of (c.capabilities?.add ?? []) as string[]) {
      if (!allowed.includes(cap)) {
        problems.push(
          `${name}: adding capability ${cap} is not allowed` +
            (SSHD_EXCEPTION_CAPABILITIES.includes(cap) ? " (only an ssh-workspace's sshd container may, see docs/policy-pack.md)" : ""),
        );
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 2. The RTE boundary

/** The app's own secrets: no RTE holds them, in any mode. */
const RTE_FORBIDDEN_ENV = [/^ENCRYPTION_SECRET$/, /^ACCESS_TOKEN_SECRET$/, /^ADMIN_PASSWORD$/];
const DATABASE_ENV = /^DB_/;
/** Where the app keeps its volume (ssh keys, .env, config, backups): an RTE never mounts it whole. */
const APP_PERSISTENT_PATH = "/app/dist/persistent";
/**
 * The app folders an RTE may mount read-write from the app's volume (RTE_FILES=local, database
 * mode): where it runs playbooks from and writes each job's extravars file (ansibleforms/ansibleforms
 * server/src/rte/ansible-core.js; components/ansibleforms/common.ts LOCAL_FILES_FOLDERS).
 */
const RTE_WRITABLE_APP_FOLDERS = ["playbooks", "repositories"];

/**
 * An AnsibleForms RTE container, whatever its mode (RTE_MODE is absent in the deprecated database
 * mode): a published layer's image (ghcr.io/ansibleforms/ansibleforms-rte-<flavour>), AF_ROLE=rte
 * (the role upstream's RTE image sets: server/src/runners/README.md, "Configuration"), or
 * RTE_MAX_JOBS, which only an RTE reads (a custom image).
 */
function isRteContainer(container: Obj): boolean {
  const env: Obj[] = container.env ?? [];
  return /ansibleforms-rte-/.test(container.image ?? "") || env.some((e) => (e.name === "AF_ROLE" && e.value === "rte") || e.name === "RTE_MAX_JOBS");
}

/** The AnsibleForms app container: its image, or ADMIN_USERNAME (only the app reads it). */
function isAppContainer(container: Obj): boolean {
  return !isRteContainer(container) && (/ansibleforms\/ansibleforms(:|@|$)/.test(container.image ?? "") || (container.env ?? []).some((e: Obj) => e.name === "ADMIN_USERNAME"));
}

function rteVolumeProblems(name: string, container: Obj, pod: Obj): string[] {
  const problems: string[] = [];
  const sharedWithOthers = (volume: string) =>
    containersOf(pod).some((other) => other !== container && !isRteContainer(other) && (other.volumeMounts ?? []).some((m: Obj) => m.name === volume));
  for (const mount of container.volumeMounts ?? []) {
    const sub = mount.subPath ?? mount.subPathExpr;
    const wholeAppVolume = !sub && APP_PERSISTENT_PATH.startsWith(String(mount.mountPath).replace(/\/$/, ""));
    if (wholeAppVolume || (!sub && sharedWithOthers(mount.name))) {
      problems.push(`${name}: mounts the whole of volume "${mount.name}" at ${mount.mountPath}, which the app uses (its ssh keys, .env, backups); mount only the playbook folders by subPath (${RTE_WRITABLE_APP_FOLDERS.join(", ")})`);
    } else if (sub && sharedWithOthers(mount.name) && mount.readOnly !== true && !RTE_WRITABLE_APP_FOLDERS.includes(sub)) {
      problems.push(`${name}: mounts ${sub} of the app's volume "${mount.name}" read-write; only ${RTE_WRITABLE_APP_FOLDERS.join(", ")} may be, anything else read-only`);
    }
  }
  return problems;
}

export function checkRteBoundary(o: K8sObject): string[] {
  const template = podTemplate(o);
  if (!template) return [];
  const pod = template.spec ?? {};
  const problems: string[] = [];
  for (const container of containersOf(pod).filter(isRteContainer)) {
    const env: Obj[] = container.env ?? [];
    const mode = env.find((e) => e.name === "RTE_MODE")?.value ?? "database";
    const name = `${label(o)} RTE container "${container.name}" (${mode})`;
    if (!["inbound", "outbound", "database"].includes(mode)) problems.push(`${name}: RTE_MODE ${JSON.stringify(mode)} is unknown (inbound or outbound)`);
    for (const e of env) {
      if (RTE_FORBIDDEN_ENV.some((re) => re.test(e.name))) problems.push(`${name}: must not hold ${e.name} (the RTE holds only its token)`);
      else if (DATABASE_ENV.test(e.name) && mode !== "database") problems.push(`${name}: must not hold ${e.name} (the RTE holds only its token)`);
      else if (e.name === "DB_PASSWORD" && !e.valueFrom?.secretKeyRef) problems.push(`${name}: DB_PASSWORD must come from a Secret (valueFrom.secretKeyRef)`);
      else if (e.name === "METRICS_TOKEN" && !e.valueFrom?.secretKeyRef) problems.push(`${name}: METRICS_TOKEN must come from a Secret of the RTE's own (valueFrom.secretKeyRef)`);
    }
    // Without ENCRYPTION_SECRET a registering RTE stores its token under upstream's public default key.
    if (mode === "database" && env.find((e) => e.name === "RTE_REGISTER")?.value !== "0") {
      problems.push(`${name}: a database-mode RTE must not register itself (RTE_REGISTER=0; declare its runner in the seed)`);
    }
    if ((container.envFrom ?? []).length > 0) problems.push(`${name}: must not use envFrom (it could bring in database or encryption secrets)`);
    const token = env.find((e) => e.name === "RTE_TOKEN");
    if (!token?.valueFrom?.secretKeyRef) problems.push(`${name}: RTE_TOKEN must come from a Secret (valueFrom.secretKeyRef)`);
    const uid = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
    if (uid !== 1000) problems.push(`${name}: must run as uid 1000 (runs as ${uid ?? "the image's user"})`);
    problems.push(...rteVolumeProblems(name, container, pod));
  }
  return problems;
}

/**
 * Every RTE whose METRICS_TOKEN comes from the Secret holding the app's METRICS_TOKEN, across the
 * stack. Both serve metrics only with a METRICS_TOKEN (ansibleforms/ansibleforms
 * server/src/lib/metrics.js); an RTE gets a token of its own, so it never holds the app's.
 */
export function checkRteMetricsTokens(objects: K8sObject[]): string[] {
  const secretOf = (container: Obj) => container.env?.find((e: Obj) => e.name === "METRICS_TOKEN")?.valueFrom?.secretKeyRef?.name as string | undefined;
  const appSecrets = new Set<string>();
  const rtes: { where: string; secret: string }[] = [];
  for (const o of objects) {
    const namespace = o.metadata?.namespace ?? "";
    for (const container of containersOf(podTemplate(o)?.spec)) {
      const secret = secretOf(container);
      if (secret === undefined) continue;
      if (isRteContainer(container)) rtes.push({ where: `${label(o)} RTE container "${container.name}"`, secret: `${namespace}/${secret}` });
      else if (isAppContainer(container)) appSecrets.add(`${namespace}/${secret}`);
    }
  }
  return rtes
    .filter((rte) => appSecrets.has(rte.secret))
    .map((rte) => `${rte.where}: METRICS_TOKEN comes from the app's METRICS_TOKEN Secret ${rte.secret.split("/")[1]}; an RTE gets a metrics token of its own, from another Secret`);
}

// ---------------------------------------------------------------------------------------------
// 2b. The runner seed: credentials reference token variables only

/**
 * The variables the components set in the AnsibleForms app container, RTE_TOKEN aside: a seed
 * credential (token, password) naming one would hand the app's own secret to a runner row
 * (components/ansibleforms/common.ts COMPONENT_APP_ENV, SEED_TOKEN_ENV).
 */
const NOT_SEED_TOKENS = [
  "PORT", "DB_HOST", "DB_PORT", "DB_USER", "DB_PASSWORD", "ENCRYPTION_SECRET", "ACCESS_TOKEN_SECRET", "ADMIN_USERNAME",
  "ADMIN_PASSWORD", "RTE_QUEUE_MINUTES", "CONFIG_SEED_PATH", "CONFIG_SEED_RELOAD_SECONDS", "METRICS_TOKEN",
];

/** A ConfigMap carrying an AnsibleForms seed: every credential a ${VAR} of a token variable, never a literal. */
export function checkSeedCredentials(o: K8sObject): string[] {
  if (o.kind !== "ConfigMap") return [];
  const problems: string[] = [];
  for (const [key, text] of Object.entries((o.data as Record<string, string> | undefined) ?? {})) {
    if (typeof text !== "string" || !/^\s*runners\s*:/m.test(text)) continue;
    const where = `${label(o)} seed ${key}`;
    for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
      if (NOT_SEED_TOKENS.includes(match[1])) problems.push(`${where}: references \${${match[1]}}; seed credentials may reference only token variables (\${RTE_TOKEN} or a secretEnv)`);
    }
    for (const match of text.matchAll(/^[\s-]*(token|password)\s*:\s*(.*?)\s*$/gm)) {
      if (!/^(["']?)\$\{[A-Za-z_][A-Za-z0-9_]*\}\1$/.test(match[2])) problems.push(`${where}: ${match[1]} is a literal; it must be a \${VAR} reference`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 3 and 4. CONNECT: static clusters only; only on the dedicated gateway, never on 80/443

/** Every object under `node` that has a `route` with routing fields, wherever it sits. */
function routesIn(node: unknown, found: Obj[] = []): Obj[] {
  if (Array.isArray(node)) node.forEach((n) => routesIn(n, found));
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "route" && typeof value === "object" && value !== null && !Array.isArray(value)) found.push(value as Obj);
      routesIn(value, found);
    }
  }
  return found;
}

const mentionsConnect = (value: unknown) => /"upgrade_type":\s*"CONNECT"|"connect_matcher"|"allow_connect":\s*true/i.test(JSON.stringify(value ?? {}));

export function checkConnectStaticClusters(o: K8sObject): string[] {
  if (o.kind !== "EnvoyFilter") return [];
  const problems: string[] = [];
  for (const [i, patch] of ((o.spec as Obj | undefined)?.configPatches ?? []).entries()) {
    const value = patch?.patch?.value;
    const text = JSON.stringify(value ?? {});
    for (const marker of OPEN_PROXY_MARKERS) {
      if (marker.test(text)) problems.push(`${label(o)} patch ${i}: ${marker.source} makes an open proxy; CONNECT routes go only to static outbound|port||fqdn clusters`);
    }
    for (const route of routesIn(value)) {
      if (typeof route.cluster !== "string" || !STATIC_CLUSTER.test(route.cluster)) {
        problems.push(`${label(o)} patch ${i}: route cluster ${JSON.stringify(route.cluster ?? Object.keys(route))} is not a static outbound|port||fqdn cluster`);
      }
    }
  }
  return problems;
}

export function checkConnectDedicatedGateway(o: K8sObject): string[] {
  if (o.kind !== "EnvoyFilter") return [];
  const spec = (o.spec as Obj | undefined) ?? {};
  const problems: string[] = [];
  for (const [i, patch] of (spec.configPatches ?? []).entries()) {
    if (!mentionsConnect(patch?.patch?.value)) continue;
    const where = `${label(o)} patch ${i}`;
    const match = patch.match ?? {};
    if (match.context !== "GATEWAY") problems.push(`${where}: CONNECT only on a gateway (match.context GATEWAY), never on sidecars`);
    const port = match.listener?.portNumber ?? match.routeConfiguration?.portNumber;
    if (typeof port !== "number") problems.push(`${where}: CONNECT must be bound to one dedicated port (match.listener.portNumber or routeConfiguration.portNumber)`);
    else if (FORBIDDEN_CONNECT_PORTS.includes(port)) problems.push(`${where}: CONNECT is never enabled on port ${port} (web traffic ports 80/443 and their targets)`);
    const selector: Record<string, string> = spec.workloadSelector?.labels ?? {};
    if (Object.keys(selector).length === 0) {
      problems.push(`${where}: CONNECT must select the dedicated CONNECT gateway (workloadSelector), not every proxy`);
    } else if (selector.istio === "ingressgateway") {
      problems.push(`${where}: CONNECT must not be enabled on the shared istio=ingressgateway; use the dedicated CONNECT gateway`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 5. Exec RBAC: no wildcards, no cluster-wide exec unless explicitly allowed

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
  return ruleResource === "*" || ruleResource === wanted || (subresource !== undefined && ruleResource === `*/${subresource}`);
}

/** The rights a rule gives on `resource` of `apiGroup` among `verbs` ("verb resource", wildcards as RBAC reads them). */
function grantsOn(rule: Obj, apiGroup: string, resource: string, verbs: string[]): string[] {
  if (!(rule.apiGroups ?? []).some((g: string) => g === apiGroup || g === "*")) return [];
  if (!(rule.resources ?? []).some((r: string) => resourceMatches(r, resource))) return [];
  const ruleVerbs: string[] = rule.verbs ?? [];
  return verbs.filter((verb) => ruleVerbs.includes(verb) || ruleVerbs.includes("*")).map((verb) => `${verb} ${resource}`);
}

/** The exec-equivalent rights (EXEC_EQUIVALENT) RBAC rules grant, as "verb resource". */
const execRightsIn = (rules: Obj[]): string[] => [...new Set(rules.flatMap((rule) => EXEC_EQUIVALENT.flatMap(({ resource, verbs }) => grantsOn(rule, "", resource, verbs))))];

export function checkExecRbac(o: K8sObject, config: EntrywayPolicyConfig = {}): string[] {
  if (o.kind !== "Role" && o.kind !== "ClusterRole") return [];
  const rules: Obj[] = (o.rules as Obj[] | undefined) ?? [];
  const isGateway = o.metadata?.labels?.["app.kubernetes.io/name"] === "exec-gateway";
  const execRights = execRightsIn(rules);
  if (!isGateway && execRights.length === 0) return [];
  const problems: string[] = [];
  for (const [i, rule] of rules.entries()) {
    for (const field of ["apiGroups", "resources", "verbs", "resourceNames"]) {
      if ((rule[field] ?? []).some((v: string) => v === "*" || v.endsWith("/*"))) {
        problems.push(`${label(o)} rule ${i}: wildcard in ${field} (exec rights are granted name by name)`);
      }
    }
    if (rule.nonResourceURLs?.length) problems.push(`${label(o)} rule ${i}: nonResourceURLs are not needed to exec`);
  }
  if (o.kind === "ClusterRole" && execRights.length > 0 && !config.allowClusterWideExec) {
    problems.push(`${label(o)}: grants ${execRights.join(", ")} (exec or its equivalent) in every namespace; use a Role per namespace, or allow it with the policy config allowClusterWideExec: true`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 5b. No exec, or its equivalent, into a namespace the stack owns (stack-wide): the exec gateway's
// (its pods hold its service-account token: cluster-wide TokenReview/SubjectAccessReview), the
// CONNECT gateway's (its ServiceAccount reads its TLS key) and AnsibleForms' (the app's secrets).

/**
 * Built-in ClusterRoles that grant exec and its equivalents (the user-facing roles of Kubernetes
 * RBAC, https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles: admin and
 * edit include pods/exec, pods/attach and creating pods; cluster-admin is everything).
 */
const BUILTIN_EXEC_CLUSTER_ROLES = ["cluster-admin", "admin", "edit"];

/** The workloads whose namespaces the stack owns, by app.kubernetes.io/name, and what exec there reaches. */
const OWNED_BY: Record<string, string> = {
  "exec-gateway": "the exec gateway's own namespace (its pods hold its service-account token)",
  "connect-gateway": "the CONNECT gateway's namespace (its service account reads its TLS key)",
  ansibleforms: "AnsibleForms' namespace (its pods hold the app's secrets)",
};

export function checkNoExecIntoGatewayNamespace(objects: K8sObject[]): string[] {
  const nameOf = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/name"];
  // Every namespace the stack owns, with why: its workloads' namespaces and the Namespaces it makes.
  const owned = new Map<string, string>();
  for (const o of objects) {
    const namespace = o.metadata?.namespace;
    const why = OWNED_BY[nameOf(o) ?? ""];
    if (o.kind === "Deployment" && namespace && why && !owned.get(namespace)?.startsWith("the exec gateway's")) owned.set(namespace, why);
  }
  for (const o of objects) {
    if (o.kind === "Namespace" && nameOf(o) === "entryway" && o.metadata?.name && !owned.has(o.metadata.name)) owned.set(o.metadata.name, "a namespace the stack owns");
  }
  // The exec gateway's Deployments: changing one runs anything as the gateway.
  const gateways = objects.filter((o) => o.kind === "Deployment" && nameOf(o) === "exec-gateway");
  const problems: string[] = [];
  for (const binding of objects.filter((o) => o.kind === "RoleBinding" && owned.has(o.metadata?.namespace ?? ""))) {
    const namespace = binding.metadata!.namespace!;
    const ref = (binding.roleRef as Obj | undefined) ?? {};
    const role = objects.find((o) => o.kind === ref.kind && o.metadata?.name === ref.name && (ref.kind === "ClusterRole" || o.metadata?.namespace === namespace));
    const rules: Obj[] = (role?.rules as Obj[] | undefined) ?? [];
    const rights = role ? execRightsIn(rules) : ref.kind === "ClusterRole" && BUILTIN_EXEC_CLUSTER_ROLES.includes(ref.name) ? [`the built-in ${ref.name} role's exec`] : [];
    for (const gateway of gateways.filter((g) => g.metadata?.namespace === namespace)) {
      const changes = rules.filter((rule) => !rule.resourceNames?.length || rule.resourceNames.includes(gateway.metadata?.name)).flatMap((rule) => grantsOn(rule, "apps", "deployments", ["patch", "update"]));
      if (changes.length > 0) rights.push(...changes.map((right) => `${right} (the exec gateway's Deployment)`));
    }
    if (rights.length > 0) {
      problems.push(`${label(binding)}: grants ${[...new Set(rights)].join(", ")} in ${namespace}, ${owned.get(namespace)}; run exec targets in a namespace of their own`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 5c. Debug containers only when configured (stack-wide): an exec gateway role may add ephemeral
// containers (pods/ephemeralcontainers, what kubectl debug patches) only when the gateway of the same
// instance has an allow-list of debug images (ENTRYWAY_DEBUG_IMAGES); without one it never adds any.

const grantsEphemeralContainers = (rules: Obj[]) =>
  rules.some((r) => (r.resources ?? []).some((res: string) => res === "pods/ephemeralcontainers") && (r.verbs ?? []).some((v: string) => ["patch", "update", "*"].includes(v)));

/** The JSON array in a container's ENTRYWAY_DEBUG_IMAGES, or none. */
function debugImagesOf(container: Obj): string[] {
  const value = (container.env ?? []).find((e: Obj) => e.name === "ENTRYWAY_DEBUG_IMAGES")?.value;
  try {
    const images = typeof value === "string" ? JSON.parse(value) : [];
    return Array.isArray(images) ? images : [];
  } catch {
    return [];
  }
}

export function checkGatewayDebugRbac(objects: K8sObject[]): string[] {
  const isGateway = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/name"] === "exec-gateway";
  const instance = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/instance"];
  const configured = objects.filter((o) => o.kind === "Deployment" && isGateway(o) && containersOf(podTemplate(o)?.spec).some((c) => debugImagesOf(c).length > 0));
  return objects
    .filter((o) => (o.kind === "Role" || o.kind === "ClusterRole") && isGateway(o) && grantsEphemeralContainers((o.rules as Obj[] | undefined) ?? []))
    .filter((role) => !configured.some((d) => instance(d) === instance(role)))
    .map((role) => `${label(role)}: grants pods/ephemeralcontainers, but its exec gateway has no debug images (ENTRYWAY_DEBUG_IMAGES); grant it only with debugContainers.images`);
}

// ---------------------------------------------------------------------------------------------
// 6. Workspaces: a PDB each, no per-workspace LoadBalancer (stack-wide)

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

export function checkWorkspaces(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const workspaces = objects.filter((o) => WORKLOAD_KINDS.includes(o.kind) && podTemplate(o)?.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace");
  for (const ws of workspaces) {
    const podLabels = podTemplate(ws)?.metadata?.labels;
    const namespace = ws.metadata?.namespace;
    const pdb = objects.find(
      (o) => o.kind === "PodDisruptionBudget" && o.metadata?.namespace === namespace && matches((o.spec as Obj | undefined)?.selector?.matchLabels, podLabels),
    );
    if (!pdb) problems.push(`${label(ws)}: an SSH workspace needs a PodDisruptionBudget selecting its pod`);
    for (const service of objects.filter((o) => o.kind === "Service" && o.metadata?.namespace === namespace)) {
      const spec = (service.spec as Obj | undefined) ?? {};
      if ((spec.type === "LoadBalancer" || spec.type === "NodePort") && matches(spec.selector, podLabels)) {
        problems.push(`${label(service)}: a per-workspace ${spec.type} Service; workspaces are reached only through the CONNECT gateway`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 7. The default AnsibleForms admin password never appears

function containsDefaultPassword(node: unknown): boolean {
  const encoded = Buffer.from(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD).toString("base64");
  const text = JSON.stringify(node ?? null);
  return text.includes(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD) || text.includes(encoded);
}

export function checkNoDefaultAdminPassword(o: K8sObject): string[] {
  const problems: string[] = [];
  if (containsDefaultPassword(o)) problems.push(`${label(o)}: holds the default AnsibleForms admin password; generate one (the AnsibleForms component does)`);
  const template = podTemplate(o);
  for (const container of containersOf(template?.spec)) {
    const isApp = /ansibleforms\/ansibleforms(:|@|$)/.test(container.image ?? "");
    if (!isApp) continue;
    const admin = (container.env ?? []).find((e: Obj) => e.name === "ADMIN_PASSWORD");
    if (!admin) problems.push(`${label(o)} container "${container.name}": ADMIN_PASSWORD is unset, so AnsibleForms falls back to its public default`);
    else if (!admin.valueFrom?.secretKeyRef) problems.push(`${label(o)} container "${container.name}": ADMIN_PASSWORD must come from a Secret (valueFrom.secretKeyRef)`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 8. AnsibleForms app and RTE on the same release (advisory)

/** The tag of an image reference (after the last ":" that follows the last "/"); undefined when none. */
function imageTag(image: string): string | undefined {
  const name = image.split("@")[0];
  const colon = name.lastIndexOf(":");
  return colon > name.lastIndexOf("/") ? name.slice(colon + 1) : undefined;
}

/**
 * Every RTE whose image tag differs from the app's, across the stack. Upstream publishes the RTE
 * with every app release ("its tags always match the app's") and an app refuses an RTE of another
 * contract (ansibleforms/ansibleforms server/src/runners/README.md, "Updating an RTE"), so a
 * different tag is allowed (an RTE you approved) but worth a warning. RTE and app containers are
 * known as isRteContainer / isAppContainer know them, so a custom image is seen too.
 */
export function checkRteTags(objects: K8sObject[]): string[] {
  const apps: { where: string; tag: string }[] = [];
  const rtes: { where: string; tag: string }[] = [];
  for (const o of objects) {
    for (const container of containersOf(podTemplate(o)?.spec)) {
      const tag = imageTag(container.image ?? "");
      if (tag === undefined) continue;
      const where = `${label(o)} container "${container.name}"`;
      if (isRteContainer(container)) rtes.push({ where, tag });
      else if (isAppContainer(container)) apps.push({ where, tag });
    }
  }
  const appTags = new Set(apps.map((a) => a.tag));
  if (appTags.size === 0) return [];
  return rtes
    .filter((rte) => !appTags.has(rte.tag))
    .map((rte) => `${rte.where}: RTE tag ${rte.tag} differs from the AnsibleForms app's (${[...appTags].join(", ")}); upstream publishes the RTE with every app release and refuses an RTE of another contract`);
}

// ---------------------------------------------------------------------------------------------
// 9. A role that reads Secrets sits in a namespace with no other Secret (stack-wide)

const READ_VERBS = ["get", "list", "watch", "*"];

/** The Secret names a rule lets its subject read: "*" for every Secret, none when it reads none. */
function secretsReadBy(rule: Obj): string[] {
  const core = (rule.apiGroups ?? []).some((g: string) => g === "" || g === "*");
  const secrets = (rule.resources ?? []).some((r: string) => r === "secrets" || r === "*");
  const reads = (rule.verbs ?? []).some((v: string) => READ_VERBS.includes(v));
  if (!core || !secrets || !reads) return [];
  return rule.resourceNames?.length ? rule.resourceNames : ["*"];
}

/**
 * Every Role (or ClusterRole bound by a RoleBinding) that may get, list or watch Secrets in a
 * namespace where the stack also puts a Secret it need not read. The internet-facing CONNECT
 * gateway is the case in point: istiod serves a gateway its TLS certificate only when the gateway's
 * ServiceAccount may list every Secret of its namespace (istio pilot/pkg/credentials/kube/secrets.go,
 * Authorize), so that namespace must hold nothing but the certificates its Gateways name
 * (spec.servers[].tls.credentialName). A ClusterRoleBinding that reads Secrets reads them everywhere.
 * Secrets the stack does not make (created by hand) are not seen here.
 */
export function checkSecretReaders(objects: K8sObject[]): string[] {
  const namespaceOf = (o: K8sObject) => o.metadata?.namespace ?? "";
  const clusterRoles = new Map(objects.filter((o) => o.kind === "ClusterRole").map((o) => [o.metadata?.name, o]));
  const served = new Set(objects.filter((o) => o.kind === "Gateway").flatMap((g) =>
    ((g.spec as Obj | undefined)?.servers ?? []).map((server: Obj) => server.tls?.credentialName).filter(Boolean).map((name: string) => `${namespaceOf(g)}/${name}`)));
  const secrets = objects.filter((o) => o.kind === "Secret" && !served.has(`${namespaceOf(o)}/${o.metadata?.name}`));
  const grants: { where: string; namespace: string | undefined; rules: Obj[] }[] = [];
  for (const o of objects) {
    if (o.kind === "Role") grants.push({ where: label(o), namespace: namespaceOf(o), rules: (o.rules as Obj[] | undefined) ?? [] });
    if ((o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") && (o.roleRef as Obj | undefined)?.kind === "ClusterRole") {
      const role = clusterRoles.get((o.roleRef as Obj).name);
      if (role) grants.push({ where: `${label(o)} (${label(role)})`, namespace: o.kind === "RoleBinding" ? namespaceOf(o) : undefined, rules: (role.rules as Obj[] | undefined) ?? [] });
    }
  }
  const problems: string[] = [];
  for (const grant of grants) {
    const readable = grant.rules.flatMap(secretsReadBy);
    if (readable.length === 0) continue;
    const exposed = secrets.filter((s) => (grant.namespace === undefined || namespaceOf(s) === grant.namespace) && (readable.includes("*") || readable.includes(s.metadata?.name ?? "")));
    for (const secret of exposed) {
      problems.push(`${grant.where}: may read Secrets where ${label(secret)} lives; a Secret-reading role (the CONNECT gateway's) needs a namespace that holds only the certificates it serves`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The CrossGuard policies

function resourcePolicy(
  name: string,
  description: string,
  check: (o: K8sObject, config: EntrywayPolicyConfig) => string[],
  configSchema?: ResourceValidationPolicy["configSchema"],
): ResourceValidationPolicy {
  return {
    name,
    description,
    enforcementLevel: "mandatory",
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
function stackPolicy(name: string, description: string, check: (objects: K8sObject[]) => string[], enforcementLevel: StackValidationPolicy["enforcementLevel"] = "mandatory"): StackValidationPolicy {
  return {
    name,
    description,
    enforcementLevel,
    validateStack: (args, reportViolation) => {
      const objects = args.resources.map((r) => toObject(r.type, r.props)).filter((o): o is K8sObject => o !== undefined);
      for (const problem of check(objects)) reportViolation(problem);
    },
  };
}

export const podSecurityRestricted = resourcePolicy(
  "entryway-pod-security-restricted",
  'Every workload meets Pod Security "restricted" (an ssh-workspace\'s sshd container may add SETUID, SETGID, SYS_CHROOT, AUDIT_WRITE).',
  checkPodSecurityRestricted,
);
export const rteBoundary = resourcePolicy(
  "entryway-rte-boundary",
  "An RTE (by image or AF_ROLE, any mode) holds no app secrets (DB_* only in database mode, from a Secret), runs as uid 1000, takes its token from a Secret, and mounts only the app's playbook folders.",
  checkRteBoundary,
);
export const seedCredentials = resourcePolicy(
  "entryway-seed-token-references",
  "AnsibleForms seed credentials are ${VAR} references to token variables (RTE_TOKEN or a secretEnv), never the app's own secrets or literals.",
  checkSeedCredentials,
);
export const connectStaticClusters = resourcePolicy(
  "entryway-connect-static-clusters",
  "CONNECT routes go only to static outbound|port||fqdn clusters: no dynamic forward proxy, original destination or cluster header.",
  checkConnectStaticClusters,
);
export const connectDedicatedGateway = resourcePolicy(
  "entryway-connect-dedicated-gateway",
  "CONNECT is enabled only on the dedicated gateway's own port, never on 80 or 443.",
  checkConnectDedicatedGateway,
);
export const execRbac = resourcePolicy(
  "entryway-exec-rbac",
  "Exec rights (and their equivalents: attach, debug containers, creating pods or ServiceAccount tokens) without wildcards, and in every namespace only when allowClusterWideExec is set.",
  checkExecRbac,
  { properties: { allowClusterWideExec: { type: "boolean", default: false } } },
);
export const noDefaultAdminPassword = resourcePolicy(
  "entryway-no-default-admin-password",
  "The default AnsibleForms admin password never appears, and the app always gets ADMIN_PASSWORD from a Secret.",
  checkNoDefaultAdminPassword,
);
export const noExecIntoGatewayNamespace = stackPolicy(
  "entryway-no-exec-into-gateway-namespace",
  "No RoleBinding grants exec or its equivalent (attach, debug containers, creating pods or ServiceAccount tokens, changing the exec gateway's Deployment) in a namespace the stack owns: the exec gateway's, the CONNECT gateway's, AnsibleForms'.",
  checkNoExecIntoGatewayNamespace,
);
export const gatewayDebugRbac = stackPolicy(
  "entryway-exec-gateway-debug-rbac",
  "An exec gateway role grants pods/ephemeralcontainers only when the gateway has an allow-list of debug images.",
  checkGatewayDebugRbac,
);
export const workspacePdbNoLoadBalancer = stackPolicy(
  "entryway-workspace-pdb-no-loadbalancer",
  "Every SSH workspace has a PodDisruptionBudget and no LoadBalancer or NodePort Service of its own.",
  checkWorkspaces,
);
export const rteTagMatchesApp = stackPolicy(
  "entryway-rte-tag-matches-app",
  "Every AnsibleForms RTE runs the app's image tag (advisory: a tested RTE of the same contract may lag).",
  checkRteTags,
  "advisory",
);
export const rteOwnMetricsToken = stackPolicy(
  "entryway-rte-own-metrics-token",
  "An RTE's METRICS_TOKEN comes from a Secret of its own, never the one holding the app's METRICS_TOKEN.",
  checkRteMetricsTokens,
);
export const secretReadersAlone = stackPolicy(
  "entryway-secret-readers-alone",
  "A role that may read Secrets (the CONNECT gateway's) sits in a namespace holding no Secret but the certificates its Gateways serve.",
  checkSecretReaders,
);

export const entrywayPolicies: (ResourceValidationPolicy | StackValidationPolicy)[] = [
  podSecurityRestricted,
  rteBoundary,
  connectStaticClusters,
  connectDedicatedGateway,
  execRbac,
  noExecIntoGatewayNamespace,
  gatewayDebugRbac,
  workspacePdbNoLoadBalancer,
  noDefaultAdminPassword,
  rteTagMatchesApp,
  seedCredentials,
  rteOwnMetricsToken,
  secretReadersAlone,
];
