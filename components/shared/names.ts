/**
 * Kubernetes object names: DNS-1123 labels (lower-case alphanumerics and '-', at most 63
 * characters). Long names are cut and suffixed with a short hash so two long inputs never
 * collapse into the same name.
 */
import { createHash } from "node:crypto";

const MAX_NAME = 63;

/** Joins name parts with '-' into a valid DNS-1123 label. Throws on an empty result. */
export function objectName(...parts: string[]): string {
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
  if (joined.length <= MAX_NAME) {
    return joined;
  }
  const hash = createHash("sha256").update(joined).digest("hex").slice(0, 8);
  return `${joined.slice(0, MAX_NAME - hash.length - 1).replace(/-$/, "")}-${hash}`;
}

/** The in-cluster DNS name of a Service. */
export function serviceFqdn(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.cluster.local`;
}
