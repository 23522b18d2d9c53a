/**
 * `entryway-exec-gateway-debug-rbac`, mandatory, stack-wide: an exec gateway Role or ClusterRole
 * grants `patch`/`update` on pods/ephemeralcontainers (what kubectl debug patches) only when the
 * exec gateway of the same instance (app.kubernetes.io/instance) has an allow-list of debug images
 * (ENTRYWAY_DEBUG_IMAGES, set by debugContainers.images); without one it never adds any, so it is
 * never granted the right.
 *
 * Upstream:
 * - https://kubernetes.io/docs/concepts/workloads/pods/ephemeral-containers/ (ephemeral containers
 *   are added through the pod's ephemeralcontainers subresource; they run any image in the pod);
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Least privilege").
 */
import { containersOf, label, podTemplate, stackPolicy, type K8sObject, type Obj } from "./helpers";

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

export const gatewayDebugRbac = stackPolicy(
  "entryway-exec-gateway-debug-rbac",
  "An exec gateway role grants pods/ephemeralcontainers only when the gateway has an allow-list of debug images.",
  "mandatory",
  checkGatewayDebugRbac,
);
