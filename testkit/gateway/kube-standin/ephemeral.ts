// The Kubernetes stand-in's ephemeral containers (part of testkit/gateway/kube-standin.ts, which STANDS IN FOR
// THE KUBERNETES API SERVER AND KUBELET).
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
import type { IncomingMessage, ServerResponse } from "node:http";
import { json, notFound, podObject, readBody, type EphemeralState, type PodFixture } from "./api-objects.js";

/** One PATCH of pods/ephemeralcontainers: the pod, the answer's HTTP status and (422) its message. */
export interface EphemeralPatchRecord {
  pod: string;
  status: number;
  message?: string;
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

/**
 * The ephemeral containers of every pod ("namespace/name"), the PATCHes that added them, and the
 * statuses the stand-in kubelet gives them. `later` runs an action after a delay (the stand-in clears
 * its timers when it stops); `pullableImages` are the images the kubelet can pull (default: all).
 */
export class EphemeralContainers {
  readonly patches: EphemeralPatchRecord[] = [];
  readonly transitions: { pod: string; container: string; state: string }[] = [];
  private readonly pods = new Map<string, EphemeralState>();

  constructor(
    private readonly later: (ms: number, action: () => void) => void,
    private readonly pullableImages?: string[],
  ) {}

  /** The pod's ephemeral containers and their states, as stored (nothing for a pod never patched). */
  of(pod: PodFixture): EphemeralState {
    return this.pods.get(`${pod.namespace}/${pod.name}`) ?? { containers: [], states: new Map() };
  }

  /** The ephemeral containers stored on a pod ("namespace/pod"), as the API serves them. */
  containers(pod: string): Record<string, unknown>[] {
    return this.pods.get(pod)?.containers ?? [];
  }

  running(pod: PodFixture, container: string): boolean {
    return this.of(pod).states.get(container)?.running !== undefined;
  }

  /** PATCH pods/<pod>/ephemeralcontainers of a known pod: validated, stored, started, answered with the pod. */
  async patch(pod: PodFixture, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const record = (status: number, message?: string) =>
      this.patches.push({ pod: `${pod.namespace}/${pod.name}`, status, ...(message ? { message } : {}) });
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
    const state = this.stored(pod);
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
    for (const container of added) this.start(pod, container);
    record(200);
    return json(response, 200, podObject(pod, state));
  }

  /** A PATCH for a pod that does not exist: recorded, and answered 404 as the API server does. */
  notFound(namespace: string, name: string, response: ServerResponse): void {
    this.patches.push({ pod: `${namespace}/${name}`, status: 404 });
    notFound(response, `pods "${name}"`, { name, kind: "pods" });
  }

  private stored(pod: PodFixture): EphemeralState {
    const key = `${pod.namespace}/${pod.name}`;
    if (!this.pods.has(key)) this.pods.set(key, { containers: [], states: new Map() });
    return this.pods.get(key)!;
  }

  private setState(pod: PodFixture, container: string, state: Record<string, unknown>): void {
    this.stored(pod).states.set(container, state);
    this.transitions.push({
      pod: `${pod.namespace}/${pod.name}`,
      container,
      state: Object.entries(state)
        .map(([k, v]) => `${k}${(v as { reason?: string }).reason ? `:${(v as { reason: string }).reason}` : ""}`)
        .join(),
    });
  }

  /** The kubelet starting a new ephemeral container: created, then running, or stuck pulling its image. */
  private start(pod: PodFixture, container: Record<string, unknown>): void {
    const name = String(container.name);
    this.setState(pod, name, { waiting: { reason: "ContainerCreating" } });
    const pullable = !this.pullableImages || this.pullableImages.includes(String(container.image));
    this.later(200, () => {
      if (pullable) return this.setState(pod, name, { running: { startedAt: new Date().toISOString() } });
      this.setState(pod, name, {
        waiting: { reason: "ErrImagePull", message: `failed to pull image "${String(container.image)}": not found` },
      });
      this.later(200, () =>
        this.setState(pod, name, {
          waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${String(container.image)}"` },
        }),
      );
    });
  }
}
