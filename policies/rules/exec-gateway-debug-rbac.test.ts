/**
 * `entryway-exec-gateway-debug-rbac`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { deployment, execRules, role, type Obj } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { gatewayDebugRbac } from "./exec-gateway-debug-rbac";

describe("exec gateway roles add debug containers only with debug images", () => {
  const labels = { "app.kubernetes.io/name": "exec-gateway", "app.kubernetes.io/instance": "entryway" };
  const gatewayWith = (env: Obj[]) => ({
    ...deployment([{ name: "gateway", image: "gw", env }], labels),
    metadata: { name: "entryway-exec-gateway", namespace: "entryway", labels },
  });
  const debugRole = {
    ...role("Role", [...execRules, { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }]),
    metadata: { name: "entryway-exec-gateway", namespace: "team-a", labels },
  };
  // The gateway's settings document, mounted from a ConfigMap where ENTRYWAY_CONFIG points, as both front ends make it.
  const withDocument = (settings: Obj, mountPath = "/etc/entryway") => {
    const gateway: Obj = gatewayWith([{ name: "ENTRYWAY_CONFIG", value: "/etc/entryway/config.json" }]);
    gateway.spec.template.spec.containers[0].volumeMounts = [{ name: "config", mountPath, readOnly: true }];
    gateway.spec.template.spec.volumes = [{ name: "config", configMap: { name: "entryway-exec-gateway" } }];
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "entryway-exec-gateway", namespace: "entryway", labels },
      data: { "config.json": JSON.stringify(settings) },
    };
    return [gateway, configMap];
  };
  it("passes the role when the gateway names debug images (its settings document, or the env that wins over it), and a role without the grant", async () => {
    const images = [{ name: "ENTRYWAY_DEBUG_IMAGES", value: '["busybox:1.36"]' }];
    expect(await runStackPolicy(gatewayDebugRbac, [gatewayWith(images), debugRole].map(asResource))).toEqual([]);
    expect(
      await runStackPolicy(
        gatewayDebugRbac,
        [...withDocument({ debugImages: ["busybox:1.36"] }), debugRole].map(asResource),
      ),
    ).toEqual([]);
    const plain = { ...debugRole, rules: execRules };
    expect(await runStackPolicy(gatewayDebugRbac, [gatewayWith([]), plain].map(asResource))).toEqual([]);
  });
  it("fires on the grant when the gateway has no (or an empty) allow-list", async () => {
    const fires =
      /Role team-a\/entryway-exec-gateway: grants pods\/ephemeralcontainers, but its exec gateway has no debug images/;
    for (const env of [[], [{ name: "ENTRYWAY_DEBUG_IMAGES", value: "[]" }]]) {
      expect((await runStackPolicy(gatewayDebugRbac, [gatewayWith(env), debugRole].map(asResource))).join()).toMatch(
        fires,
      );
    }
    // A document without images, or with images but not the one the gateway reads (mounted elsewhere).
    for (const objects of [
      withDocument({ authorizer: "kubernetes" }),
      withDocument({ debugImages: ["busybox:1.36"] }, "/etc/other"),
    ]) {
      expect((await runStackPolicy(gatewayDebugRbac, [...objects, debugRole].map(asResource))).join()).toMatch(fires);
    }
  });
});
