/**
 * Turns recorded Pulumi resources into the Kubernetes objects they would apply, with every
 * secret value replaced, in a stable order.
 */
import type { RecordedResource } from "./runtime";

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
};

export const REDACTED = "[secret]";

/** Install order, as Helm uses it: what others depend on comes first. */
const KIND_ORDER = [
  "Namespace",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "ConfigMap",
  "StorageClass",
  "PersistentVolumeClaim",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "Service",
  "DaemonSet",
  "Pod",
  "Deployment",
  "StatefulSet",
  "HorizontalPodAutoscaler",
  "Job",
  "CronJob",
  "Ingress",
];

function isKubernetesObject(resource: RecordedResource): boolean {
  return resource.custom && resource.type.startsWith("kubernetes:") && !resource.type.startsWith("pulumi:providers:");
}

/** Keeps the shape of a secret value (its keys help review) and replaces every leaf. */
function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v)]));
  }
  return REDACTED;
}

function redactPath(target: Record<string, unknown>, path: string): void {
  const keys = path.split("/");
  let node: Record<string, unknown> = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null) {
      return;
    }
    node = next as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  node[last] = redactValue(node[last]);
}

function redact(resource: RecordedResource): Manifest {
  const manifest = structuredClone(resource.inputs) as Manifest;
  for (const path of resource.secretPaths) {
    if (path === "") {
      throw new Error(`${resource.type} ${resource.name}: the whole object is secret`);
    }
    redactPath(manifest, path);
  }
  if (manifest.kind === "Secret") {
    for (const field of ["data", "stringData"]) {
      const values = manifest[field];
      if (values !== undefined) manifest[field] = redactValue(values);
    }
  }
  return manifest;
}

export function sortManifests(manifests: Manifest[]): Manifest[] {
  const rank = (kind: string) => {
    const index = KIND_ORDER.indexOf(kind);
    return index === -1 ? KIND_ORDER.length : index;
  };
  return [...manifests].sort(
    (a, b) =>
      rank(a.kind) - rank(b.kind) ||
      a.kind.localeCompare(b.kind) ||
      (a.metadata.namespace ?? "").localeCompare(b.metadata.namespace ?? "") ||
      (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
  );
}

/** The Kubernetes objects among the recorded resources, secrets redacted, in install order. */
export function toManifests(resources: readonly RecordedResource[]): Manifest[] {
  return sortManifests(resources.filter(isKubernetesObject).map(redact));
}

/** A file name per object that stays the same while the object keeps its identity. */
export function manifestFileName(manifest: Manifest): string {
  const scope = manifest.metadata.namespace ?? "cluster";
  return `${scope}.${manifest.kind.toLowerCase()}.${manifest.metadata.name ?? "unnamed"}.yaml`;
}
