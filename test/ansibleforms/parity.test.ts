/**
 * The two front ends make the same AnsibleForms objects: for every ansibleforms-* chart scenario,
 * the chart (Helm 4) and the components fed the equivalent stack config (test/parity/) give the
 * same names, namespaces and specs. Only the labels that name the tool (managed-by, version,
 * helm.sh/chart) and secret values may differ.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { AnsibleForms } from "../../components/ansibleforms/ansibleforms";
import { ansibleFormsArgs, remoteRteArgs, type AnsibleFormsConfig, type RemoteRteConfig } from "../../components/ansibleforms/config";
import { RemoteRte } from "../../components/ansibleforms/remote-rte";
import { helmBinaries, helmTemplate, repoRoot } from "../harness/helm";
import { render } from "../harness/pulumi";
import type { ObjectLike } from "../harness/validate";

const chart = path.join(repoRoot, "charts/entryway");
const scenarios = readdirSync(path.join(chart, "ci")).filter((f) => f.startsWith("ansibleforms-")).sort();
const TOOL_LABELS = ["app.kubernetes.io/managed-by", "app.kubernetes.io/version", "helm.sh/chart"];

function normalise(object: ObjectLike): unknown {
  const copy = JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    const labels = (record.metadata as { labels?: Record<string, string> } | undefined)?.labels;
    if (labels) for (const key of TOOL_LABELS) delete labels[key];
    Object.values(record).forEach(strip);
  };
  strip(copy);
  if (copy.kind === "Secret") {
    for (const field of ["data", "stringData"]) {
      const values = copy[field] as Record<string, string> | undefined;
      if (values) for (const key of Object.keys(values)) values[key] = "[secret]";
    }
  }
  return copy;
}

const key = (o: ObjectLike) => `${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`;
const helm = helmBinaries()[0];

describe("AnsibleForms parity: chart and components", () => {
  it.each(scenarios)("%s", async (file) => {
    const config = parse(readFileSync(path.join(repoRoot, "test/parity", file.replace(/\.yaml$/, ".stack.yaml")), "utf8")) as {
      namespace: string;
      ansibleForms?: AnsibleFormsConfig;
      remoteRte?: RemoteRteConfig;
    };
    const { manifests } = await render(() => {
      if (config.ansibleForms) new AnsibleForms("entryway", ansibleFormsArgs(config.ansibleForms, config.namespace));
      if (config.remoteRte) new RemoteRte("entryway", remoteRteArgs(config.remoteRte, config.namespace));
    });
    const fromHelm = helmTemplate(helm, chart, { valuesFiles: [path.join(chart, "ci", file)] }).filter((o) =>
      /ansibleforms|remote-rte/.test(o.metadata?.name ?? ""),
    );
    const pulumiObjects = new Map((manifests as ObjectLike[]).map((o) => [key(o), normalise(o)]));
    const helmObjects = new Map(fromHelm.map((o) => [key(o), normalise(o)]));
    expect(helmObjects.size).toBeGreaterThanOrEqual(3);
    expect([...pulumiObjects.keys()].sort()).toEqual([...helmObjects.keys()].sort());
    for (const [name, object] of helmObjects) expect(pulumiObjects.get(name), name).toEqual(object);
  });
});
