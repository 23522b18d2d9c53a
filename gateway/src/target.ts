// What the client asks to enter, from the upgrade request's query string, or from Entry's
// headers (app-name, proc-name, instance-no: LAIN's app/proc/instance) for Entry's own client.
import type { IncomingMessage } from "node:http";

export type Target =
  | { kind: "pod"; namespace: string; pod: string; container?: string }
  | { kind: "workload"; namespace: string; workload: string; instance: number; container?: string }
  | { kind: "docker"; container: string };

export class TargetError extends Error {}

// DNS-1123 names (Kubernetes) and Docker container names/ids; nothing else reaches a backend URL.
const K8S_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
const WORKLOAD = /^(?:(statefulset|deployment)\/)?([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$/;

function name(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new TargetError(`invalid ${what}: ${JSON.stringify(value.slice(0, 80))}`);
  return value;
}

export function parseTarget(url: URL, headers: IncomingMessage["headers"], backend: "kubernetes" | "docker"): Target {
  const q = (key: string, header?: string) => {
    const fromHeader = header ? headers[header] : undefined;
    return url.searchParams.get(key) ?? (typeof fromHeader === "string" ? fromHeader : null);
  };
  const container = q("container");
  if (backend === "docker") {
    if (!container) throw new TargetError("missing container");
    return { kind: "docker", container: name(container, DOCKER_NAME, "container") };
  }
  const namespace = q("namespace", "app-name");
  if (!namespace) throw new TargetError("missing namespace");
  name(namespace, K8S_NAME, "namespace");
  const containerPart = container ? { container: name(container, K8S_NAME, "container") } : {};
  const pod = q("pod");
  if (pod) return { kind: "pod", namespace, pod: name(pod, K8S_NAME, "pod"), ...containerPart };
  const workload = q("workload", "proc-name");
  const instance = q("instance", "instance-no");
  if (!workload || instance === null) throw new TargetError("name a pod, or a workload and an instance");
  name(workload, WORKLOAD, "workload");
  if (!/^\d{1,6}$/.test(instance)) throw new TargetError("invalid instance: expected a number");
  return { kind: "workload", namespace, workload, instance: Number(instance), ...containerPart };
}

/** A namespace named outside a target (GET /v1/targets?namespace=): DNS-1123, as in a target. */
export function checkNamespace(namespace: string): string {
  return name(namespace, K8S_NAME, "namespace");
}

export function describeTarget(target: Target): string {
  switch (target.kind) {
    case "pod":
      return `${target.namespace}/${target.pod}${target.container ? "/" + target.container : ""}`;
    case "workload":
      return `${target.namespace}/${target.workload}#${target.instance}${target.container ? "/" + target.container : ""}`;
    case "docker":
      return `docker/${target.container}`;
  }
}
