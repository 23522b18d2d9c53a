import { describe, expect, it } from "vitest";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../../components/shared/security";
import { selectorLabels, standardLabels } from "../../components/shared/labels";
import { assertValidObjects, validateObject, type ObjectLike } from "../../testkit/harness/validate";

function deployment(): ObjectLike {
  const identity = { name: "demo", instance: "test", component: "server" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "demo", namespace: "ns", labels: standardLabels(identity) },
    spec: {
      replicas: 2,
      selector: { matchLabels: selectorLabels(identity) },
      template: {
        metadata: { labels: standardLabels(identity) },
        spec: {
          securityContext: restrictedPodSecurityContext({ user: 1000 }),
          containers: [
            {
              name: "app",
              image: "example/app:1",
              ports: [{ name: "http", containerPort: 8000 }],
              securityContext: restrictedContainerSecurityContext(),
            },
          ],
        },
      },
    },
  };
}

describe("manifest validation against upstream schemas", () => {
  it("accepts a sound Deployment built with the shared helpers", async () => {
    await expect(validateObject(deployment())).resolves.toEqual([]);
  });

  it('rejects a Deployment with replicas: "two"', async () => {
    const bad = deployment();
    (bad.spec as { replicas: unknown }).replicas = "two";
    const errors = await validateObject(bad);
    expect(errors.join("\n")).toMatch(/\/spec\/replicas must be integer/);
  });

  it("rejects an unknown field such as spec.template.spec.containerz", async () => {
    const bad = deployment();
    const podSpec = (bad.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    podSpec.containerz = podSpec.containers;
    const errors = await validateObject(bad);
    expect(errors).toEqual(["Deployment/demo: /spec/template/spec/containerz is not a field of Deployment"]);
  });

  it("rejects unknown fields deep inside lists and at the top level", async () => {
    const bad = deployment() as ObjectLike & {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    bad.spec.template.spec.containers[0].imagePullPolice = "Always";
    (bad as Record<string, unknown>).sepc = {};
    const errors = await validateObject(bad);
    expect(errors).toHaveLength(2);
    expect(errors.join("\n")).toContain("/spec/template/spec/containers/0/imagePullPolice is not a field");
    expect(errors.join("\n")).toContain("/sepc is not a field");
  });

  it("accepts any key in maps such as labels and ConfigMap data", async () => {
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", labels: { "any.key/x": "v" } },
      data: { "seed.yaml": "x" },
    };
    await expect(validateObject(configMap)).resolves.toEqual([]);
  });

  it("rejects an Istio Gateway whose port number is a string", async () => {
    const gateway = {
      apiVersion: "networking.istio.io/v1",
      kind: "Gateway",
      metadata: { name: "gw" },
      spec: {
        selector: { istio: "x" },
        servers: [{ port: { number: "2222", name: "connect", protocol: "HTTP" }, hosts: ["*"] }],
      },
    };
    expect((await validateObject(gateway)).join("\n")).toMatch(/servers\/0\/port\/number must be integer/);
    gateway.spec.servers[0].port.number = 2222 as unknown as string;
    await expect(validateObject(gateway)).resolves.toEqual([]);
  });

  it("validates prometheus-operator ServiceMonitor and PodMonitor, unknown fields and bad types included", async () => {
    const serviceMonitor = {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "ServiceMonitor",
      metadata: { name: "app", namespace: "ns" },
      spec: {
        selector: { matchLabels: { app: "x" } },
        endpoints: [
          {
            port: "http",
            path: "/metrics",
            authorization: { type: "Bearer", credentials: { name: "s", key: "token" } },
          },
        ],
      },
    };
    await expect(validateObject(serviceMonitor)).resolves.toEqual([]);
    const misspelt = structuredClone(serviceMonitor) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    misspelt.spec.endpoints[0].bearerToken_Secret = { name: "s", key: "token" };
    expect(await validateObject(misspelt as ObjectLike)).toEqual([
      "ServiceMonitor/app: /spec/endpoints/0/bearerToken_Secret is not a field of ServiceMonitor",
    ]);
    const podMonitor = {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PodMonitor",
      metadata: { name: "rte", namespace: "ns" },
      spec: { selector: { matchLabels: { app: "x" } }, podMetricsEndpoints: [{ port: "rte", path: "/metrics" }] },
    };
    await expect(validateObject(podMonitor)).resolves.toEqual([]);
    (podMonitor.spec.podMetricsEndpoints[0] as Record<string, unknown>).port = 8001;
    expect((await validateObject(podMonitor)).join("\n")).toMatch(/podMetricsEndpoints\/0\/port must be string/);
  });

  it("rejects an object whose kind has no upstream schema, and one without a name", async () => {
    await expect(
      validateObject({ apiVersion: "apps/v1", kind: "Deploymant", metadata: { name: "x" } }),
    ).rejects.toThrow(/no upstream schema/);
    expect(await validateObject({ apiVersion: "v1", kind: "ConfigMap", metadata: {} })).toContain(
      "ConfigMap/?: /metadata/name is required",
    );
  });

  it("assertValidObjects lists every problem in one error", async () => {
    const bad = deployment();
    (bad.spec as { replicas: unknown }).replicas = "two";
    await expect(assertValidObjects([deployment(), bad])).rejects.toThrow(
      /invalid manifests:\n {2}Deployment\/demo: \/spec\/replicas/,
    );
  });
});
