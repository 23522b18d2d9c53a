/**
 * Kubernetes object names: DNS-1123 labels (lower-case alphanumerics and '-', at most 63
 * characters). Long names are cut and suffixed with a short hash so two long inputs never
 * collapse into the same name.
 */
import { createHash } from "node:crypto";

const MAX_NAME = 63;
/**
 * A StatefulSet's pods carry the label controller-revision-hash = <StatefulSet name>-<hash>
 * (kubernetes/kubernetes pkg/controller/statefulset/stateful_set_utils.go setPodRevision, with the
 * revision named by pkg/controller/history/controller_history.go ControllerRevisionName), the hash
 * being a uint32 in decimal, safe-encoded (HashControllerRevision): up to 10 characters. A label
 * value holds at most 63, so a StatefulSet name over 63 - 1 - 10 = 52 characters leaves its pods
 * uncreatable.
 * @internal
 */
export const MAX_STATEFULSET_NAME = 52;

/** Joins name parts with '-' into a valid DNS-1123 label of at most `max` characters. Throws on an empty result. @internal */
export function cappedName(max: number, ...parts: string[]): string {
  const joined = parts
    .filter((part) => part.length > 0)
    .join("-")
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  if (joined.length === 0) {
    throw new Error(`cannot make a Kubernetes name from ${JSON.stringify(parts)}`);
  }
  if (joined.length <= max) {
    return joined;
  }
  const hash = createHash("sha256").update(joined).digest("hex").slice(0, 8);
  return `${joined.slice(0, max - hash.length - 1).replace(/-$/, "")}-${hash}`;
}

/** Joins name parts with '-' into a valid DNS-1123 label (at most 63 characters). @internal */
export function objectName(...parts: string[]): string {
  return cappedName(MAX_NAME, ...parts);
}

/** A StatefulSet's name (and its Service's): at most 52 characters, so its pods' revision label fits. @internal */
export function statefulSetName(...parts: string[]): string {
  return cappedName(MAX_STATEFULSET_NAME, ...parts);
}

/** The in-cluster DNS name of a Service. @internal */
export function serviceFqdn(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.cluster.local`;
}
