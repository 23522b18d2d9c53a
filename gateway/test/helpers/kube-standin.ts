// STAND-IN FOR THE KUBERNETES API SERVER AND KUBELET (no cluster runs here). It serves the few REST
// calls the gateway makes (pods, StatefulSets, Deployments, TokenReview, SubjectAccessReview, /version)
// and the pods/exec WebSocket in the v5.channel.k8s.io and v4.channel.k8s.io subprotocols: byte 0 of
// each binary message is the channel (0 stdin, 1 stdout, 2 stderr, 3 status JSON, 4 resize JSON,
// 255 close-stream in v5). Exec runs the requested command for real, in a real PTY (node-pty) when
// tty=true (plain pipes otherwise), on this machine. Like a kubelet with runc, closing the exec WebSocket does NOT end the
// process: that is the lingering-shell behaviour the gateway has to deal with.
//
// TokenReview and SubjectAccessReview follow the API's own description (kubernetes/api
// authentication/v1/types.go and authorization/v1/types.go): a token is valid for the audiences it
// was made for; spec.audiences defaults to the API server's; status.audiences is the intersection.
// A SubjectAccessReview is judged on the user info TokenReview returned: RBAC matches bindings by
// user name AND groups, and authorizer webhooks see uid and extra, so the stand-in refuses a review
// that does not carry all four exactly as TokenReview gave them (a gateway that drops one gets
// decisions made for somebody else). Rules name a namespace, or "namespace/pod" for one pod only
// (RBAC resourceNames): those need the review's resourceAttributes.name.
//
// EPHEMERAL CONTAINERS (the pods/ephemeralcontainers subresource, what `kubectl debug` patches:
// kubernetes/kubectl pkg/cmd/debug/debug.go, debugByEphemeralContainer). A strategic merge patch
// ({"spec":{"ephemeralContainers":[...]}}, merged by name; other patch types are answered 415 here,
// though a real API server takes them too) is applied to the pod's list and the result validated as
// the API server does (kubernetes/kubernetes pkg/apis/core/validation/validation.go):
// validateEphemeralContainers (a DNS-1123 name unique among all the pod's containers: Duplicate;
// an image: Required; targetContainerName naming a regular or init container: NotFound; only the
// fields in allowedEphemeralContainerFields, so no ports, resources, probes or lifecycle: Forbidden
// "cannot be set for an Ephemeral Container") and ValidatePodEphemeralContainersUpdate (an existing
// ephemeral container may not be changed or removed: Forbidden). Failures are 422 Invalid Status
// objects, an unknown pod 404, and nothing is stored. A stored container's status, in
// status.ephemeralContainerStatuses, goes waiting (ContainerCreating) → running, as a kubelet
// reports it; with an image the kubelet cannot pull (`pullableImages`) it stays waiting
// (ErrImagePull, then ImagePullBackOff). Exec into it works once it runs.
//
// DISTROLESS PODS (`distroless: true`) have no /bin/sh: an exec into their containers fails as the
// kubelet reports a runtime's exec error that is not an exit code (kubernetes/kubernetes
// pkg/kubelet/cri/streaming/remotecommand/exec.go, ServeExec: apierrors.NewInternalError on the
// status channel, so no exit code), with the message containerd/runc give for a missing binary.
import { execFileSync, spawn as spawnChild } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pty from "node-pty";
import { WebSocketServer, type WebSocket } from "ws";
import { selfSignedCertificate } from "./tls.js";

export type ExecProtocol = "v5.channel.k8s.io" | "v4.channel.k8s.io";

interface PodFixture {
  name: string;
  namespace: string;
  containers: string[];
  phase?: string;
  labels?: Record<string, string>;
  createdAt?: string;
  /** No shell or any other binary in its containers: every exec into them fails (ephemeral containers work). */
  distroless?: boolean;
  /** Its containers' securityContext.runAsUser. */
  runAsUser?: number;
  /** Its controller (ownerReferences with controller: true), as the StatefulSet or ReplicaSet controller sets it. */
  owner?: { kind: "StatefulSet" | "ReplicaSet"; name: string };
}

/** The uid the stand-in gives an object: stable, and different for every kind, namespace and name. */
export const standinUid = (kind: string, namespace: string, name: string) => `uid-${kind}-${namespace}-${name}`;

export interface StandinOptions {
  /** The subprotocol to choose when the client offers it. */
  protocol: ExecProtocol;
  /** Token the gateway's service account presents. */
  serviceAccountToken: string;
  pods: PodFixture[];
  statefulSets?: { namespace: string; name: string }[];
  deployments?: {
    namespace: string;
    name: string;
    matchLabels: Record<string, string>;
    matchExpressions?: Record<string, unknown>[];
  }[];
  /** ReplicaSets, each controlled by the Deployment named (or by none: an orphan). */
  replicaSets?: { namespace: string; name: string; deployment?: string; labels: Record<string, string> }[];
  /** TokenReview: user tokens to user names (audience "entryway", groups system:authenticated) or full user info. */
  users?: Record<string, string | StandinUser>;
  /** SubjectAccessReview: user name to the namespaces (or "namespace/pod") where it may create pods/exec. */
  execAllowed?: Record<string, string[]>;
  /** The same for patch pods/ephemeralcontainers (adding a debug container). */
  debugAllowed?: Record<string, string[]>;
  /** Images the stand-in kubelet can pull (default: all); an ephemeral container with another one never runs. */
  pullableImages?: string[];
  /**
   * A runtime that sets a new terminal's modes late, as conmon does: what it read before the process
   * ran (a fresh terminal's modes) it writes back this many ms after the process started
   * (containers/conmon src/ctrl.c terminal_accept_cb: tcgetattr, ONLCR, tcsetattr; ONLCR is on
   * already on a fresh terminal), and it passes the terminal's output on only from then (src/conmon.c
   * adds its reader after that). The window is wide here, where conmon's is a preemption between two
   * system calls: what a command sets in it is undone every time.
   */
  lateTerminalModesMs?: number;
}

export interface StandinUser {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
  /** The audiences the token was made for (`kubectl create token --audience`). */
  audiences: string[];
}

/** The audience of a token made for the API server itself (the default service-account issuer's). */
export const API_SERVER_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

export function standinUser(token: string, user: string | StandinUser): StandinUser {
  if (typeof user !== "string") return user;
  return {
    username: user,
    uid: `uid-${user}`,
    groups: ["system:authenticated"],
    extra: { "authentication.kubernetes.io/credential-id": [`JTI=${token}`] },
    audiences: ["entryway"],
  };
}

export interface SubjectAccessReviewSpec {
  user?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  resourceAttributes?: { namespace?: string; name?: string; verb?: string; resource?: string; subresource?: string };
}

/**
 * The stand-in's judgement of one SubjectAccessReview (exported for the test that it refuses incomplete
 * reviews): create pods/exec by `execAllowed`, patch pods/ephemeralcontainers by `debugAllowed`.
 */
export function judgeAccessReview(
  spec: SubjectAccessReviewSpec,
  users: StandinUser[],
  execAllowed: Record<string, string[]>,
  debugAllowed: Record<string, string[]> = {},
): { allowed: boolean; reason?: string } {
  const user = users.find((u) => u.username === spec.user);
  if (!user) return { allowed: false, reason: `no such user ${spec.user ?? "(none)"}` };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const missing = [
    ["groups", same(spec.groups, user.groups)],
    ["uid", spec.uid === user.uid],
    ["extra", same(spec.extra, user.extra)],
  ]
    .filter(([, ok]) => !ok)
    .map(([field]) => field);
  if (missing.length > 0)
    return {
      allowed: false,
      reason: `the review does not carry the user's ${missing.join(", ")} as TokenReview returned them`,
    };
  const attrs = spec.resourceAttributes;
  const isExec = attrs?.verb === "create" && attrs.subresource === "exec";
  const isDebug = attrs?.verb === "patch" && attrs.subresource === "ephemeralcontainers";
  if (!attrs || attrs.resource !== "pods" || !(isExec || isDebug) || !attrs.namespace) {
    return {
      allowed: false,
      reason: "no RBAC rule allows it (not create pods/exec or patch pods/ephemeralcontainers in a namespace)",
    };
  }
  const rules = (isExec ? execAllowed : debugAllowed)[user.username] ?? [];
  const allowed =
    rules.includes(attrs.namespace) || (attrs.name !== undefined && rules.includes(`${attrs.namespace}/${attrs.name}`));
  return allowed ? { allowed } : { allowed, reason: "no RBAC rule allows it" };
}

export interface ExecRecord {
  namespace: string;
  pod: string;
  container: string;
  command: string[];
  tty: boolean;
  pid: number;
}

/** One PATCH of pods/ephemeralcontainers: the pod, the answer's HTTP status and (422) its message. */
export interface EphemeralPatchRecord {
  pod: string;
  status: number;
  message?: string;
}

export interface KubeStandin {
  url: string;
  kubeconfigPath: string;
  /** Every exec started, in order. */
  execs: ExecRecord[];
  /** Every ephemeralcontainers PATCH received, in order, and every status an ephemeral container went through. */
  ephemeralPatches: EphemeralPatchRecord[];
  ephemeralTransitions: { pod: string; container: string; state: string }[];
  /** The ephemeral containers stored on a pod ("namespace/pod"), as the API serves them. */
  ephemeralContainers(pod: string): Record<string, unknown>[];
  /** Every TokenReview spec and SubjectAccessReview spec received, in order. */
  tokenReviews: unknown[];
  accessReviews: SubjectAccessReviewSpec[];
  /** The tokens TokenReview knows, live: deleting one is deleting its ServiceAccount. */
  users: Map<string, StandinUser>;
  /** Where each user may create pods/exec, live: emptying a user's list is removing their RoleBinding. */
  execAllowed: Record<string, string[]>;
  /** Drops every exec WebSocket without a status, as an API server restart does; the processes stay. */
  dropConnections(): void;
  /** Live processes in the sessions of the execs started with stdin (TTY or pipe mode): the shells and whatever they started. */
  liveShells(): number[];
  stop(): Promise<void>;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function notFound(response: ServerResponse, what: string): void {
  json(response, 404, {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason: "NotFound",
    code: 404,
    message: `${what} not found`,
  });
}

function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")));
    request.on("error", reject);
  });
}

/** Live (non-zombie) processes on this machine in one of the given sessions: the shells and their children. */
function processesInSessions(sessions: Set<number>): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after "(comm)": state ppid pgrp session ...
      const [state, , , session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z" && sessions.has(Number(session))) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** The JSON names of allowedEphemeralContainerFields (validation.go) that are true, and EphemeralContainer's own targetContainerName. */
const EPHEMERAL_ALLOWED_FIELDS = new Set([
  "name",
  "image",
  "command",
  "args",
  "workingDir",
  "envFrom",
  "env",
  "volumeMounts",
  "volumeDevices",
  "terminationMessagePath",
  "terminationMessagePolicy",
  "imagePullPolicy",
  "securityContext",
  "stdin",
  "stdinOnce",
  "tty",
  "targetContainerName",
]);
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A canonical JSON text (keys sorted), for the API server's semantic equality of two containers. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/**
 * The pod's ephemeral containers after a strategic merge patch of them (merge key: name), or the
 * field errors validateEphemeralContainers and ValidatePodEphemeralContainersUpdate would give.
 */
export function patchEphemeralContainers(
  pod: { containers: string[] },
  existing: Record<string, unknown>[],
  patch: unknown,
): { containers: Record<string, unknown>[] } | { errors: string[] } {
  const entries = (patch as { spec?: { ephemeralContainers?: unknown } })?.spec?.ephemeralContainers;
  if (!Array.isArray(entries))
    return { errors: ["spec.ephemeralContainers: Required value: the patch lists no ephemeral containers"] };
  const merged = existing.map((c) => ({ ...c }));
  for (const entry of entries as Record<string, unknown>[]) {
    const at = merged.findIndex((c) => c.name === entry.name);
    if (at >= 0) merged[at] = { ...merged[at], ...entry };
    else merged.push({ ...entry });
  }
  const errors: string[] = [];
  const path = (i: number, field: string) => `spec.ephemeralContainers[${i}].${field}`;
  const names = new Set(pod.containers);
  merged.forEach((container, i) => {
    const name = typeof container.name === "string" ? container.name : "";
    if (!name) errors.push(`${path(i, "name")}: Required value`);
    else if (!DNS1123_LABEL.test(name) || name.length > 63)
      errors.push(
        `${path(i, "name")}: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
      );
    if (names.has(name)) errors.push(`${path(i, "name")}: Duplicate value: ${JSON.stringify(name)}`);
    names.add(name);
    if (!container.image) errors.push(`${path(i, "image")}: Required value`);
    const target = container.targetContainerName;
    if (target !== undefined && target !== "" && !pod.containers.includes(String(target)))
      errors.push(`${path(i, "targetContainerName")}: Not found: ${JSON.stringify(target)}`);
    for (const field of Object.keys(container)) {
      if (!EPHEMERAL_ALLOWED_FIELDS.has(field))
        errors.push(`${path(i, field)}: Forbidden: cannot be set for an Ephemeral Container`);
    }
  });
  for (const old of existing) {
    const now = merged.find((c) => c.name === old.name);
    if (canonical(now) !== canonical(old))
      errors.push(
        `spec.ephemeralContainers: Forbidden: existing ephemeral containers ${JSON.stringify(old.name)} may not be changed`,
      );
  }
  return errors.length > 0 ? { errors } : { containers: merged };
}

/** The modes of a fresh terminal as node-pty makes one (`stty -g`), for the late runtime. */
async function freshTerminalModes(): Promise<string> {
  const terminal = pty.spawn("stty", ["-g"], { cols: 80, rows: 24, encoding: null });
  let output = "";
  terminal.onData((data) => void (output += String(data)));
  await new Promise((resolve) => terminal.onExit(resolve));
  return output.trim();
}

export async function startKubeStandin(options: StandinOptions): Promise<KubeStandin> {
  const dir = mkdtempSync(join(tmpdir(), "entryway-kube-"));
  const freshModes = options.lateTerminalModesMs ? await freshTerminalModes() : undefined;
  const execs: ExecRecord[] = [];
  const tokenReviews: unknown[] = [];
  const accessReviews: SubjectAccessReviewSpec[] = [];
  const users = new Map(Object.entries(options.users ?? {}).map(([token, user]) => [token, standinUser(token, user)]));
  const execAllowed = { ...options.execAllowed };
  /** Session leaders of the execs with stdin (a TTY, or pipe mode): the shells the gateway started. */
  const ttyPids: number[] = [];
  const sockets = new Set<WebSocket>();
  const ephemeralPatches: EphemeralPatchRecord[] = [];
  const ephemeralTransitions: { pod: string; container: string; state: string }[] = [];
  /** Per pod ("namespace/name"): its ephemeral containers and their states (ContainerState objects). */
  const ephemeral = new Map<
    string,
    { containers: Record<string, unknown>[]; states: Map<string, Record<string, unknown>> }
  >();
  const timers = new Set<NodeJS.Timeout>();
  const ephemeralOf = (pod: PodFixture) => {
    const key = `${pod.namespace}/${pod.name}`;
    if (!ephemeral.has(key)) ephemeral.set(key, { containers: [], states: new Map() });
    return ephemeral.get(key)!;
  };
  const setState = (pod: PodFixture, container: string, state: Record<string, unknown>) => {
    ephemeralOf(pod).states.set(container, state);
    ephemeralTransitions.push({
      pod: `${pod.namespace}/${pod.name}`,
      container,
      state: Object.entries(state)
        .map(([k, v]) => `${k}${(v as { reason?: string }).reason ? `:${(v as { reason: string }).reason}` : ""}`)
        .join(),
    });
  };
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };
  /** The kubelet starting a new ephemeral container: created, then running, or stuck pulling its image. */
  const startEphemeral = (pod: PodFixture, container: Record<string, unknown>) => {
    const name = String(container.name);
    setState(pod, name, { waiting: { reason: "ContainerCreating" } });
    const pullable = !options.pullableImages || options.pullableImages.includes(String(container.image));
    later(200, () => {
      if (pullable) return setState(pod, name, { running: { startedAt: new Date().toISOString() } });
      setState(pod, name, {
        waiting: { reason: "ErrImagePull", message: `failed to pull image "${String(container.image)}": not found` },
      });
      later(200, () =>
        setState(pod, name, {
          waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${String(container.image)}"` },
        }),
      );
    });
  };
  const runningEphemeral = (pod: PodFixture, container: string) =>
    ephemeral.get(`${pod.namespace}/${pod.name}`)?.states.get(container)?.running !== undefined;
  const authorized = (request: IncomingMessage) =>
    request.headers.authorization === `Bearer ${options.serviceAccountToken}`;

  /** An ownerReferences entry naming the object's controller (apimachinery meta/v1 OwnerReference). */
  const controllerReference = (kind: string, namespace: string, name: string) => ({
    apiVersion: "apps/v1",
    kind,
    name,
    uid: standinUid(kind, namespace, name),
    controller: true,
    blockOwnerDeletion: true,
  });
  /** Equality-based label selectors (k=v,...), what the gateway sends. */
  const selectorOf = (url: URL) =>
    Object.fromEntries(
      (url.searchParams.get("labelSelector") ?? "")
        .split(",")
        .filter(Boolean)
        .map((kv) => kv.split("=") as [string, string]),
    );
  const podObject = (pod: PodFixture) => {
    const { containers, states } = ephemeral.get(`${pod.namespace}/${pod.name}`) ?? {
      containers: [],
      states: new Map(),
    };
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: pod.name,
        namespace: pod.namespace,
        uid: standinUid("Pod", pod.namespace, pod.name),
        labels: pod.labels ?? {},
        creationTimestamp: pod.createdAt ?? "2026-01-01T00:00:00Z",
        ...(pod.owner ? { ownerReferences: [controllerReference(pod.owner.kind, pod.namespace, pod.owner.name)] } : {}),
      },
      spec: {
        containers: pod.containers.map((name) => ({
          name,
          image: "busybox",
          ...(pod.runAsUser !== undefined ? { securityContext: { runAsUser: pod.runAsUser } } : {}),
        })),
        ...(containers.length > 0 ? { ephemeralContainers: containers } : {}),
      },
      status: {
        phase: pod.phase ?? "Running",
        ...(states.size > 0
          ? {
              ephemeralContainerStatuses: [...states].map(([name, state]) => ({
                name,
                image: containers.find((c) => c.name === name)?.image,
                state,
                ready: false,
                restartCount: 0,
              })),
            }
          : {}),
      },
    };
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!authorized(request))
      return json(response, 401, { kind: "Status", status: "Failure", code: 401, message: "Unauthorized" });
    const url = new URL(request.url ?? "/", "http://standin");
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (path === "/version") return json(response, 200, { major: "1", minor: "35", gitVersion: "v1.35.0-standin" });
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(path))) {
      const pod = options.pods.find((p) => p.namespace === m![1] && p.name === m![2]);
      return pod ? json(response, 200, podObject(pod)) : notFound(response, `pods "${m[2]}"`);
    }
    if (
      (m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/ephemeralcontainers$/.exec(path)) &&
      request.method === "PATCH"
    ) {
      const pod = options.pods.find((p) => p.namespace === m![1] && p.name === m![2]);
      const record = (status: number, message?: string) =>
        ephemeralPatches.push({ pod: `${m![1]}/${m![2]}`, status, ...(message ? { message } : {}) });
      if (!pod) {
        record(404);
        return json(response, 404, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "NotFound",
          code: 404,
          details: { name: m[2], kind: "pods" },
          message: `pods "${m[2]}" not found`,
        });
      }
      const contentType = request.headers["content-type"];
      if (contentType !== "application/strategic-merge-patch+json") {
        record(415);
        return json(response, 415, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "UnsupportedMediaType",
          code: 415,
          message: `the stand-in takes the strategic merge patch kubectl debug sends, not ${contentType}`,
        });
      }
      const state = ephemeralOf(pod);
      const result = patchEphemeralContainers(pod, state.containers, await readBody(request));
      if ("errors" in result) {
        const message = `Pod "${pod.name}" is invalid: ${result.errors.length === 1 ? result.errors[0] : `[${result.errors.join(", ")}]`}`;
        record(422, message);
        return json(response, 422, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "Invalid",
          code: 422,
          details: { name: pod.name, kind: "Pod" },
          message,
        });
      }
      const added = result.containers.filter((c) => !state.containers.some((old) => old.name === c.name));
      state.containers = result.containers;
      for (const container of added) startEphemeral(pod, container);
      record(200);
      return json(response, 200, podObject(pod));
    }
    // A namespace's pods, or every namespace's (GET /api/v1/pods).
    if ((m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?pods$/.exec(path))) {
      const selector = selectorOf(url);
      const items = options.pods.filter(
        (p) =>
          (m![1] === undefined || p.namespace === m![1]) &&
          Object.entries(selector).every(([k, v]) => p.labels?.[k] === v),
      );
      return json(response, 200, { apiVersion: "v1", kind: "PodList", metadata: {}, items: items.map(podObject) });
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/(statefulsets|deployments)\/([^/]+)$/.exec(path))) {
      const [, namespace, kind, name] = m;
      if (kind === "statefulsets") {
        const found = options.statefulSets?.some((s) => s.namespace === namespace && s.name === name);
        return found
          ? json(response, 200, {
              apiVersion: "apps/v1",
              kind: "StatefulSet",
              metadata: { name, namespace, uid: standinUid("StatefulSet", namespace!, name!) },
              spec: {},
            })
          : notFound(response, `statefulsets.apps "${name}"`);
      }
      const deployment = options.deployments?.find((d) => d.namespace === namespace && d.name === name);
      const selector = {
        matchLabels: deployment?.matchLabels,
        ...(deployment?.matchExpressions ? { matchExpressions: deployment.matchExpressions } : {}),
      };
      return deployment
        ? json(response, 200, {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name, namespace, uid: standinUid("Deployment", namespace!, name!) },
            spec: { selector },
          })
        : notFound(response, `deployments.apps "${name}"`);
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/replicasets$/.exec(path))) {
      const namespace = m[1]!;
      const selector = selectorOf(url);
      const items = (options.replicaSets ?? [])
        .filter((rs) => rs.namespace === namespace && Object.entries(selector).every(([k, v]) => rs.labels[k] === v))
        .map((rs) => ({
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: {
            name: rs.name,
            namespace,
            uid: standinUid("ReplicaSet", namespace, rs.name),
            labels: rs.labels,
            ...(rs.deployment
              ? { ownerReferences: [controllerReference("Deployment", namespace, rs.deployment)] }
              : {}),
          },
          spec: { selector: { matchLabels: rs.labels } },
        }));
      return json(response, 200, { apiVersion: "apps/v1", kind: "ReplicaSetList", metadata: {}, items });
    }
    if (request.method === "POST" && path === "/apis/authentication.k8s.io/v1/tokenreviews") {
      const body = (await readBody(request)) as { spec?: { token?: string; audiences?: string[] } };
      tokenReviews.push(body.spec ?? {});
      const token = body.spec?.token ?? "";
      const user = users.get(token);
      const wanted = body.spec?.audiences?.length ? body.spec.audiences : [API_SERVER_AUDIENCE];
      const audiences = user ? user.audiences.filter((a) => wanted.includes(a)) : [];
      if (!user || audiences.length === 0)
        return json(response, 201, {
          ...body,
          status: { authenticated: false, error: user ? "token audiences are invalid" : "invalid bearer token" },
        });
      const { username, uid, groups, extra } = user;
      return json(response, 201, {
        ...body,
        status: { authenticated: true, user: { username, uid, groups, extra }, audiences },
      });
    }
    if (request.method === "POST" && path === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      const body = (await readBody(request)) as { spec?: SubjectAccessReviewSpec };
      accessReviews.push(body.spec ?? {});
      return json(response, 201, {
        ...body,
        status: judgeAccessReview(body.spec ?? {}, [...users.values()], execAllowed, options.debugAllowed ?? {}),
      });
    }
    notFound(response, path);
  }

  // TLS like a real API server (client-node refuses plain HTTP): a throwaway self-signed certificate for 127.0.0.1.
  const { keyPath, certPath } = selfSignedCertificate(dir);
  const cert = readFileSync(certPath);
  const server = https.createServer({ key: readFileSync(keyPath), cert }, (request, response) => {
    handle(request, response).catch((error: Error) => json(response, 500, { message: error.message }));
  });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has(options.protocol) ? options.protocol : false),
  });

  server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://standin");
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    const pod = m && options.pods.find((p) => p.namespace === m[1] && p.name === m[2]);
    const container = url.searchParams.get("container") ?? pod?.containers[0] ?? "";
    if (!authorized(request) || !pod || !(pod.containers.includes(container) || runningEphemeral(pod, container))) {
      socket.end(`HTTP/1.1 ${authorized(request) ? "404 Not Found" : "401 Unauthorized"}\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      const command = url.searchParams.getAll("command");
      const tty = url.searchParams.get("tty") === "true";
      if (pod.distroless && pod.containers.includes(container)) return failExec(ws, command[0] ?? "");
      runExec(ws, command, tty, url.searchParams.get("stdin") === "true", (pid) =>
        execs.push({ namespace: pod.namespace, pod: pod.name, container, command, tty, pid }),
      );
    });
  });

  function sendStatus(ws: WebSocket, exitCode: number | null, signal?: number): void {
    const status =
      exitCode === 0
        ? { metadata: {}, status: "Success" }
        : {
            metadata: {},
            status: "Failure",
            message:
              exitCode === null
                ? `command terminated by signal ${signal}`
                : `command terminated with non-zero exit code: exit status ${exitCode}`,
            reason: exitCode === null ? "InternalError" : "NonZeroExitCode",
            details: exitCode === null ? {} : { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
          };
    if (ws.readyState === ws.OPEN) {
      ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
      ws.close(1000);
    }
  }

  /** A distroless container: the runtime cannot start the command, and the kubelet says so as an internal error. */
  function failExec(ws: WebSocket, file: string): void {
    const cause = `error executing command in container: failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: ${JSON.stringify(file)}: stat ${file}: no such file or directory: unknown`;
    const status = {
      metadata: {},
      status: "Failure",
      message: `Internal error occurred: ${cause}`,
      reason: "InternalError",
      details: { causes: [{ message: cause }] },
      code: 500,
    };
    ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
    ws.close(1000);
  }

  function runExec(
    ws: WebSocket,
    command: string[],
    tty: boolean,
    stdin: boolean,
    record: (pid: number) => void,
  ): void {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TERM: "xterm", LANG: "C.UTF-8" };
    if (tty) {
      const [file, ...args] = command;
      // encoding null: raw bytes both ways, so nothing here repairs or breaks UTF-8 for the gateway.
      const proc = pty.spawn(file!, args, { cols: 80, rows: 24, cwd: dir, env, encoding: null });
      ttyPids.push(proc.pid);
      // node-pty destroys its PTY socket 200 ms after the process exits, dropping output not read by
      // then (easily, under load). A kubelet never drops output: let the socket end by itself (EIO
      // after the last byte), at most 5 s later.
      const ptySocket = (
        proc as unknown as { _socket: { destroy(): void; once(event: string, listener: () => void): void } }
      )._socket;
      const destroyNow = ptySocket.destroy.bind(ptySocket);
      ptySocket.destroy = () => {
        const timer = setTimeout(destroyNow, 5000);
        ptySocket.once("close", () => clearTimeout(timer));
      };
      record(proc.pid);
      // The late runtime (lateTerminalModesMs): the modes read now, written back later, output held until then.
      let held: Buffer[] | null = null;
      if (options.lateTerminalModesMs) {
        const terminal = (proc as unknown as { ptsName: string }).ptsName;
        held = [];
        later(options.lateTerminalModesMs, () => {
          try {
            execFileSync("stty", ["-F", terminal, freshModes!]);
          } catch {
            // the process already ended
          }
          const output = held!;
          held = null;
          for (const data of output) forward(data);
        });
      }
      // Output is forwarded only while the client is there; afterwards the process lingers, blocked on its TTY.
      // Flow control, as the kubelet's stream has: stop reading the PTY while the gateway is not reading.
      let pending = 0;
      let paused = false;
      proc.onData((data: string | Buffer) => (held ? void held.push(Buffer.from(data)) : forward(data)));
      function forward(data: string | Buffer): void {
        if (ws.readyState !== ws.OPEN) return;
        const frame = Buffer.concat([Buffer.from([1]), Buffer.from(data)]);
        pending += frame.length;
        ws.send(frame, () => {
          pending -= frame.length;
          if (paused && pending < 256 * 1024) {
            paused = false;
            proc.resume();
          }
        });
        if (!paused && pending > 1024 * 1024) {
          paused = true;
          proc.pause();
        }
      }
      // Exit comes after the PTY socket closed (see above), so all output was read: send the status
      // once it has also gone out, as the kubelet does.
      proc.onExit(({ exitCode, signal }) => {
        const finish = () =>
          pending > 0 ? void setTimeout(finish, 20) : sendStatus(ws, signal ? null : exitCode, signal);
        finish();
      });
      ws.on("message", (data: Buffer) => {
        const channel = data[0];
        const payload = data.subarray(1);
        if (channel === 0) proc.write(Buffer.from(payload));
        else if (channel === 4) {
          // Go's JSON decoding ignores case: the kubelet takes {"Width","Height"} and client-node's {"width","height"}.
          const size = Object.fromEntries(
            Object.entries(JSON.parse(payload.toString("utf8")) as Record<string, number>).map(([k, v]) => [
              k.toLowerCase(),
              v,
            ]),
          );
          try {
            if (size.width && size.height) proc.resize(size.width, size.height);
          } catch {
            // the process already ended
          }
        } else if (channel === 255 && payload[0] === 0) proc.write("\x04"); // v5: client closed stdin
      });
      return;
    }
    // Without a TTY: plain pipes, stdout on channel 1 and stderr on channel 2, and stdin (when asked for)
    // on channel 0. Only v5 can end stdin alone: CLOSE (255) followed by the channel number (KEP-4006;
    // kubernetes staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go). Under v4 the
    // API server's wsstream (k8s.io/apiserver/pkg/util/wsstream/conn.go, handle) skips a frame for a
    // channel it does not have, so stdin stays open there, as it does here.
    // detached: a session of its own, as a PTY gives, so liveShells() counts what it started too.
    const child = spawnChild(command[0]!, command.slice(1), {
      cwd: dir,
      env,
      detached: true,
      stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    record(child.pid ?? -1);
    if (stdin && child.pid) ttyPids.push(child.pid);
    child.stdin?.on("error", () => {}); // the process may end before reading all its input
    child.stdout!.on("data", (d: Buffer) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([1]), d])));
    child.stderr!.on("data", (d: Buffer) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([2]), d])));
    ws.on("message", (data: Buffer) => {
      if (data[0] === 0) child.stdin?.write(data.subarray(1));
      else if (data[0] === 255 && data[1] === 0 && ws.protocol === "v5.channel.k8s.io") child.stdin?.end();
    });
    // 'close': the process ended and its output pipes are drained, so the status comes after the last byte.
    child.on("close", (code) => sendStatus(ws, code));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "standin", cluster: { server: url, "certificate-authority-data": cert.toString("base64") } }],
      users: [{ name: "gateway", user: { token: options.serviceAccountToken } }],
      contexts: [{ name: "standin", context: { cluster: "standin", user: "gateway" } }],
      "current-context": "standin",
    }),
  );

  return {
    url,
    kubeconfigPath,
    execs,
    ephemeralPatches,
    ephemeralTransitions,
    ephemeralContainers: (pod) => ephemeral.get(pod)?.containers ?? [],
    tokenReviews,
    accessReviews,
    users,
    execAllowed,
    liveShells: () => processesInSessions(new Set(ttyPids)),
    dropConnections: () => {
      for (const ws of sockets) ws.terminate();
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const ws of sockets) ws.terminate();
      for (const pid of processesInSessions(new Set(ttyPids))) process.kill(pid, "SIGKILL");
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
