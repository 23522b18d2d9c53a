/**
 * `entryway-exec-gateway-debug-rbac`, mandatory, stack-wide: an exec gateway Role or ClusterRole
 * grants `patch`/`update` on pods/ephemeralcontainers (what kubectl debug patches) only when the
 * exec gateway of the same instance (app.kubernetes.io/instance) has an allow-list of debug images
 * (debugImages in its settings document, set by debugContainers.images; or ENTRYWAY_DEBUG_IMAGES,
 * which wins in the gateway); without one it never adds any, so it is never granted the right.
 *
 * Upstream:
 * - https://kubernetes.io/docs/concepts/workloads/pods/ephemeral-containers/ (ephemeral containers
 *   are added through the pod's ephemeralcontainers subresource; they run any image in the pod);
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Least privilege").
 */
import { containersOf, label, podTemplate, stackPolicy, type K8sObject, type Obj } from "./helpers";

const grantsEphemeralContainers = (rules: Obj[]) =>
  rules.some(
    (r) =>
      (r.resources ?? []).some((res: string) => res === "pods/ephemeralcontainers") &&
      (r.verbs ?? []).some((v: string) => ["patch", "update", "*"].includes(v)),
  );

/** A JSON text's value, or undefined when it is not JSON. */
function parsed(text: unknown): unknown {
  try {
    return typeof text === "string" ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The debug images a gateway container has, as the gateway reads its settings
 * (gateway/src/config.ts): ENTRYWAY_DEBUG_IMAGES when set, else debugImages of the JSON document
 * ENTRYWAY_CONFIG names, here the key of a ConfigMap mounted at that file's directory.
 */
function debugImagesOf(deployment: K8sObject, container: Obj, objects: K8sObject[]): string[] {
  const env = (name: string) => (container.env ?? []).find((e: Obj) => e.name === name)?.value;
  let images = parsed(env("ENTRYWAY_DEBUG_IMAGES"));
  const file = env("ENTRYWAY_CONFIG");
  if (images === undefined && typeof file === "string") {
    const slash = file.lastIndexOf("/");
    const mount = (container.volumeMounts ?? []).find((m: Obj) => m.mountPath === file.slice(0, slash) && !m.subPath);
    const volume = (podTemplate(deployment)?.spec?.volumes ?? []).find((v: Obj) => v.name === mount?.name);
    const configMap = objects.find(
      (o) =>
        o.kind === "ConfigMap" &&
        o.metadata?.name === volume?.configMap?.name &&
        o.metadata?.namespace === deployment.metadata?.namespace,
    );
    images = (parsed((configMap?.data as Obj | undefined)?.[file.slice(slash + 1)]) as Obj | undefined)?.debugImages;
  }
  return Array.isArray(images) ? images : [];
}

export function checkGatewayDebugRbac(objects: K8sObject[]): string[] {
  const isGateway = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/name"] === "exec-gateway";
  const instance = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/instance"];
  const configured = objects.filter(
    (o) =>
      o.kind === "Deployment" &&
      isGateway(o) &&
      containersOf(podTemplate(o)?.spec).some((c) => debugImagesOf(o, c, objects).length > 0),
  );
  return objects
    .filter(
      (o) =>
        (o.kind === "Role" || o.kind === "ClusterRole") &&
        isGateway(o) &&
        grantsEphemeralContainers((o.rules as Obj[] | undefined) ?? []),
    )
    .filter((role) => !configured.some((d) => instance(d) === instance(role)))
    .map(
      (role) =>
        `${label(role)}: grants pods/ephemeralcontainers, but its exec gateway has no debug images (debugImages); grant it only with debugContainers.images`,
    );
}

export const gatewayDebugRbac = stackPolicy(
  "entryway-exec-gateway-debug-rbac",
  "An exec gateway role grants pods/ephemeralcontainers only when the gateway has an allow-list of debug images.",
  "mandatory",
  checkGatewayDebugRbac,
);
