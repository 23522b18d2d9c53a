/**
 * Platform conventions on every workload, in both front ends: charts/entryway/ci/conventions.yaml
 * (and its StackConfig twin, conventions.stack.yaml) sets a registry mirror, pull secrets, a digest
 * for every image, and placement and pod metadata for every workload. Every pod the chart renders
 * (helm test pods included) and every pod the Stack renders must carry them: each image from the
 * mirror and pinned by digest (Istio's injected proxy, image "auto", aside), the pull secrets, the
 * node placement and priority, the extra annotations and labels, and its selector labels intact.
 * And the one image helper of each front end (entryway.image, imageReference) makes the same
 * reference of the same settings: a digest in place of the tag, the global registry over the image's.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EXEC_GATEWAY_IMAGE } from "../../components/exec-gateway";
import { imageReference, type GlobalSettings, type ImageSettings } from "../../components/shared/image";
import { parseStackConfig, Stack } from "../../components/stack";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const chart = path.join(repoRoot, "charts/entryway");
const scenario = path.join(chart, "ci/conventions.yaml");
const MIRROR = "mirror.example.com:5000/";
const PULL_SECRETS = [{ name: "mirror-pull" }, { name: "second-pull" }];

/** Every pod template (and bare pod) with the workload it belongs to. */
function pods(
  objects: readonly ObjectLike[],
): { where: string; metadata: Obj; spec: Obj; selector?: Record<string, string> }[] {
  return (objects as unknown as Obj[]).flatMap((o) => {
    const where = `${o.kind}/${o.metadata?.name}`;
    if (o.kind === "Pod") return [{ where, metadata: o.metadata, spec: o.spec }];
    const template = o.spec?.template;
    return template?.spec
      ? [{ where, metadata: template.metadata ?? {}, spec: template.spec, selector: o.spec.selector?.matchLabels }]
      : [];
  });
}

/** Fails, naming the workload, unless every pod carries the conventions the scenario sets. */
function expectConventions(objects: readonly ObjectLike[]): number {
  const found = pods(objects);
  for (const { where, metadata, spec, selector } of found) {
    for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
      if (container.image === "auto") continue;
      expect(container.image, `${where} ${container.name}`).toMatch(
        new RegExp(`^${MIRROR.replace(/\./g, "\\.")}[a-z0-9/._-]+@sha256:[a-f0-9]{64}$`),
      );
    }
    expect(spec.imagePullSecrets, `${where} imagePullSecrets`).toEqual(PULL_SECRETS);
    expect(spec.nodeSelector?.pool, `${where} nodeSelector`).toBeTruthy();
    expect(spec.tolerations?.[0]?.key, `${where} tolerations`).toBe("dedicated");
    expect(spec.affinity?.nodeAffinity, `${where} affinity`).toBeDefined();
    expect(spec.topologySpreadConstraints, `${where} topologySpreadConstraints`).toEqual([
      { maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway" },
    ]);
    expect(spec.priorityClassName, `${where} priorityClassName`).toBe("platform-high");
    expect(metadata.annotations?.["example.com/owner"], `${where} podAnnotations`).toBe("platform");
    expect(metadata.labels?.team, `${where} podLabels`).toBe("platform");
    expect(metadata.labels?.["app.kubernetes.io/name"], `${where} keeps its own name label`).not.toBe("not-a-selector");
    for (const [key, value] of Object.entries(selector ?? {}))
      expect(metadata.labels?.[key], `${where} selector label ${key}`).toBe(value);
  }
  return found.length;
}

describe("platform conventions on every workload", () => {
  it.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
    "the chart renders them on every pod, test pods included (%s)",
    (_label, helm) => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario], tests: true });
      // Exec gateway, app, MySQL, connect gateway, workspace, remote RTE and three test pods.
      expect(expectConventions(objects)).toBe(9);
    },
  );

  it("the Stack renders them on every pod", async () => {
    const config = parseStackConfig(
      parse(readFileSync(path.join(repoRoot, "test/parity/conventions.stack.yaml"), "utf8")),
    );
    const { manifests } = await render(() => new Stack("entryway", config));
    expect(expectConventions(manifests as ObjectLike[])).toBe(6);
  });

  const DIGEST = `sha256:${"9".repeat(64)}`;
  it.each([
    [{}, {}, "ghcr.io/entryway/exec-gateway:0.1.0"],
    [{ tag: "1.2.3" }, {}, "ghcr.io/entryway/exec-gateway:1.2.3"],
    [{ tag: "1.2.3", digest: DIGEST }, {}, `ghcr.io/entryway/exec-gateway@${DIGEST}`],
    [{ registry: "", repository: "team/gateway" }, {}, "team/gateway:0.1.0"],
    [{ registry: "registry.example.com" }, {}, "registry.example.com/entryway/exec-gateway:0.1.0"],
    [
      { registry: "" },
      { imageRegistry: "mirror.example.com/ghcr" },
      "mirror.example.com/ghcr/entryway/exec-gateway:0.1.0",
    ],
  ] as [ImageSettings, GlobalSettings, string][])(
    "an image %j under global %j is %s in both front ends",
    (image, global, reference) => {
      expect(imageReference(EXEC_GATEWAY_IMAGE, image, global)).toBe(reference);
      const set = [
        "execGateway.enabled=true",
        "execGateway.targetNamespaces={apps}",
        ...Object.entries(image).map(([key, value]) => `execGateway.image.${key}=${value}`),
        ...Object.entries(global).map(([key, value]) => `global.${key}=${value}`),
      ];
      const objects = helmTemplate(helmBinaries()[0], chart, { set }) as unknown as Obj[];
      expect(objects.find((o) => o.kind === "Deployment")?.spec.template.spec.containers[0].image).toBe(reference);
    },
  );

  it("the walk rejects a pod without the mirror, the digest or the pull secrets", () => {
    const helm = helmBinaries()[0];
    const plain = helmTemplate(helm, chart, { valuesFiles: [path.join(chart, "ci/exec-gateway-kubernetes.yaml")] });
    expect(() => expectConventions(plain)).toThrow(/Deployment\/entryway-exec-gateway gateway/);
    const noSecrets = helmTemplate(helm, chart, { valuesFiles: [scenario], set: ["global.imagePullSecrets=null"] });
    expect(() => expectConventions(noSecrets)).toThrow(/imagePullSecrets/);
    const tagged = helmTemplate(helm, chart, { valuesFiles: [scenario], set: ["execGateway.image.digest="] });
    expect(() => expectConventions(tagged)).toThrow(/exec-gateway gateway/);
  });
});
