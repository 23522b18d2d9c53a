// The Kubernetes stand-in's REST objects and answers (part of testkit/gateway/kube-standin.ts, which STANDS IN
// FOR THE KUBERNETES API SERVER AND KUBELET): the pods, StatefulSets, Deployments and ReplicaSets the
// gateway reads, with the uid and controller ownerReferences (apimachinery meta/v1 OwnerReference) the
// API server sets, and a Status object for what is not found.
import type { IncomingMessage, ServerResponse } from "node:http";

export interface PodFixture {
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

/** Instance `ordinal` of a StatefulSet's pods: named `<set>-<ordinal>`, labelled app=<set>, the set its controller. */
export const statefulSetPod = (namespace: string, set: string, ordinal: number, containers: string[]): PodFixture => ({
  namespace,
  name: `${set}-${ordinal}`,
  containers,
  labels: { app: set },
  owner: { kind: "StatefulSet", name: set },
});

/** A pod a ReplicaSet made (its controller), with its labels, created at midnight UTC of `createdOn` (YYYY-MM-DD); `more` adds the rest. */
export const replicaSetPod = (
  namespace: string,
  replicaSet: string,
  name: string,
  containers: string[],
  labels: Record<string, string>,
  createdOn: string,
  more: Partial<PodFixture> = {},
): PodFixture => ({
  namespace,
  name,
  containers,
  labels,
  createdAt: `${createdOn}T00:00:00Z`,
  owner: { kind: "ReplicaSet", name: replicaSet },
  ...more,
});

/** The uid the stand-in gives an object: stable, and different for every kind, namespace and name. */
export const standinUid = (kind: string, namespace: string, name: string) => `uid-${kind}-${namespace}-${name}`;

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** A 404 Status object for `what` (e.g. `pods "web-0"`), with the Status details when given. */
export function notFound(response: ServerResponse, what: string, details?: { name: string; kind: string }): void {
  json(response, 404, {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason: "NotFound",
    code: 404,
    ...(details ? { details } : {}),
    message: `${what} not found`,
  });
}

export function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")));
    request.on("error", reject);
  });
}

/** An ownerReferences entry naming the object's controller (apimachinery meta/v1 OwnerReference). */
export const controllerReference = (kind: string, namespace: string, name: string) => ({
  apiVersion: "apps/v1",
  kind,
  name,
  uid: standinUid(kind, namespace, name),
  controller: true,
  blockOwnerDeletion: true,
});

/** Equality-based label selectors (k=v,...), what the gateway sends. */
export const selectorOf = (url: URL) =>
  Object.fromEntries(
    (url.searchParams.get("labelSelector") ?? "")
      .split(",")
      .filter(Boolean)
      .map((kv) => kv.split("=") as [string, string]),
  );

/** A pod's ephemeral containers and their states (ContainerState objects), as stored. */
export interface EphemeralState {
  containers: Record<string, unknown>[];
  states: Map<string, Record<string, unknown>>;
}

/** The Pod object the API serves for a fixture, with its ephemeral containers and their statuses. */
export function podObject(pod: PodFixture, { containers, states }: EphemeralState): Record<string, unknown> {
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
}
