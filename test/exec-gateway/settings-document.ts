import type { ObjectLike } from "../../testkit/harness/validate";

/**
 * The exec gateway's settings document as both front ends write it: config.json of its ConfigMap
 * (named like its Deployment), parsed. Throws when there is none, so a test cannot pass on nothing.
 */
export function gatewaySettings(
  objects: readonly ObjectLike[],
  name = "entryway-exec-gateway",
): Record<string, unknown> {
  const configMap = objects.find((o) => o.kind === "ConfigMap" && o.metadata?.name === name) as
    { data?: Record<string, string> } | undefined;
  const document = configMap?.data?.["config.json"];
  if (document === undefined) throw new Error(`no ConfigMap ${name} with config.json among ${objects.length} objects`);
  return JSON.parse(document) as Record<string, unknown>;
}
