/**
 * Parity of the two front ends. For every chart scenario charts/entryway/ci/<name>.yaml, the
 * equivalent stack config test/parity/<name>.stack.yaml (a StackConfig object) is rendered
 * through the Stack component and compared with `helm template entryway charts/entryway
 * --namespace entryway -f <scenario>` under Helm 4 and Helm 3:
 *  - the same set of objects (kind, namespace, name);
 *  - each object equal after normalising what only names the tool (the managed-by, version and
 *    helm.sh/chart labels) and secret values (Pulumi's are generated and redacted; Helm's are
 *    whatever the values say).
 * Everything else (images, env, ports, volumes and mounts, probes, security contexts, RBAC
 * rules, Istio specs, selectors) must be equal, so drift in either front end fails here.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";

const chart = path.join(repoRoot, "charts/entryway");
const scenarios = chartScenarios().find((c) => c.chart === chart)?.scenarios ?? [];
const helms = helmBinaries();

/** Labels that name the tool that made an object, not what the object is. */
export const TOOL_LABELS = ["app.kubernetes.io/managed-by", "app.kubernetes.io/version", "helm.sh/chart"];
const REDACTED = "[secret]";

/** A comparable copy: tool labels removed everywhere (object and pod template), secret values masked. */
export function normalise(object: ObjectLike): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    const metadata = record.metadata as
      { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined;
    if (metadata?.labels) for (const key of TOOL_LABELS) delete metadata.labels[key];
    Object.values(record).forEach(strip);
  };
  strip(copy);
  if (copy.kind === "Secret") {
    for (const field of ["data", "stringData"]) {
      const values = copy[field] as Record<string, unknown> | undefined;
      if (values) for (const key of Object.keys(values)) values[key] = REDACTED;
    }
  }
  return copy;
}

const identity = (o: ObjectLike) => `${o.kind}/${o.metadata?.namespace ?? "-"}/${o.metadata?.name}`;

/** Every difference between the two front ends' objects, one line each; empty when they agree. */
export function differences(fromPulumi: ObjectLike[], fromHelm: ObjectLike[]): string[] {
  const pulumiById = new Map(fromPulumi.map((o) => [identity(o), normalise(o)]));
  const helmById = new Map(fromHelm.map((o) => [identity(o), normalise(o)]));
  const found: string[] = [];
  for (const id of helmById.keys()) if (!pulumiById.has(id)) found.push(`${id}: made by Helm only`);
  for (const id of pulumiById.keys()) if (!helmById.has(id)) found.push(`${id}: made by Pulumi only`);
  for (const [id, fromChart] of helmById) {
    const fromComponents = pulumiById.get(id);
    if (fromComponents === undefined) continue;
    const walk = (a: unknown, b: unknown, where: string): void => {
      if (JSON.stringify(a) === JSON.stringify(b)) return;
      if (
        typeof a === "object" &&
        a !== null &&
        typeof b === "object" &&
        b !== null &&
        Array.isArray(a) === Array.isArray(b)
      ) {
        const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
        for (const key of keys)
          walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${where}/${key}`);
        return;
      }
      found.push(`${id} ${where}: Pulumi ${JSON.stringify(a)}, Helm ${JSON.stringify(b)}`);
    };
    walk(fromComponents, fromChart, "");
  }
  return found;
}

export function stackFileFor(scenario: string): string {
  return path.join(repoRoot, "test/parity", `${path.basename(scenario, ".yaml")}.stack.yaml`);
}

async function renderStack(file: string): Promise<ObjectLike[]> {
  const config = parseStackConfig(parse(readFileSync(file, "utf8")), path.relative(repoRoot, file));
  const { manifests } = await render(() => new Stack("parity", config));
  return manifests as ObjectLike[];
}

describe("parity of the chart and the Pulumi components", () => {
  it("has chart scenarios to compare", () => {
    expect(scenarios.map((s) => path.basename(s))).toContain("default.yaml");
  });

  describe.each(scenarios.map((s) => [path.basename(s), s] as const))("%s", (name, scenario) => {
    it("has its equivalent stack config", () => {
      const file = stackFileFor(scenario);
      if (!existsSync(file)) {
        throw new Error(
          `chart scenario charts/entryway/ci/${name} has no equivalent stack config: add ${path.relative(repoRoot, file)} ` +
            "(a StackConfig object, namespace: entryway, createNamespace: false) that makes the same objects",
        );
      }
    });

    it.each(helms.map((h) => [`helm ${h.major}`, h] as const))("makes the same objects as %s", async (_label, helm) => {
      const file = stackFileFor(scenario);
      if (!existsSync(file)) throw new Error(`no ${path.relative(repoRoot, file)} (see the test above)`);
      const fromPulumi = await renderStack(file);
      const fromHelm = helmTemplate(helm, chart, {
        valuesFiles: [scenario],
        releaseName: "entryway",
        namespace: "entryway",
      });
      expect(differences(fromPulumi, fromHelm)).toEqual([]);
      expect(fromHelm.length, "objects compared").toBe(fromPulumi.length);
    });
  });
});

describe("the parity comparison itself", () => {
  it("sees drift in content, in the set of objects, and ignores only the tool labels", async () => {
    const scenario = path.join(chart, "ci", "exec-gateway-kubernetes.yaml");
    const fromPulumi = await renderStack(stackFileFor(scenario));
    const fromHelm = helmTemplate(helms[0], chart, { valuesFiles: [scenario] });
    expect(differences(fromPulumi, fromHelm)).toEqual([]);
    const mutated = structuredClone(fromHelm) as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const deployment = mutated.find((o) => o.kind === "Deployment")!;
    deployment.spec.template.spec.containers[0].readinessProbe.periodSeconds = 6;
    deployment.metadata.labels["app.kubernetes.io/version"] = "9.9.9";
    const role = mutated.findIndex((o) => o.kind === "Role");
    mutated.splice(role, 1);
    expect(differences(fromPulumi, mutated as ObjectLike[])).toEqual([
      expect.stringMatching(/^Role\/team-a\/entryway-exec-gateway: made by Pulumi only$/),
      "Deployment/entryway/entryway-exec-gateway /spec/template/spec/containers/0/readinessProbe/periodSeconds: Pulumi 5, Helm 6",
    ]);
  });
});
