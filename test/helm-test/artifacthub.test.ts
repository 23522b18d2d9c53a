/**
 * Chart.yaml's Artifact Hub metadata (https://artifacthub.io/docs/topics/annotations/helm):
 * `artifacthub.io/images` lists exactly the images the chart pulls with its defaults, so it cannot
 * drift from values.yaml and the templates. "What it pulls" is what `helm template` renders for
 * every ci/ scenario (test hooks included), each RTE flavour the schema allows, minus images a
 * scenario picks itself (its own image `tag`, `digest` or `registry`, or `global.imageRegistry`) and Istio's
 * injected proxy ("auto").
 * `home` and `sources` are the repository package.json names.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const chart = path.join(repoRoot, "charts/entryway");
const chartYaml = parse(readFileSync(path.join(chart, "Chart.yaml"), "utf8")) as Obj;
const schema = JSON.parse(readFileSync(path.join(chart, "values.schema.json"), "utf8")) as Obj;
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as Obj;
const scenarios = chartScenarios().find((c) => c.chart === chart)!.scenarios;

/** Every container image of every pod template (and bare pod) in a rendering. */
function imagesOf(objects: Obj[]): string[] {
  return objects.flatMap((o) => {
    const spec = o.kind === "Pod" ? o.spec : (o.spec?.template?.spec ?? o.spec?.jobTemplate?.spec?.template?.spec);
    return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c: Obj) => String(c.image));
  });
}

/** The string values under keys named `key`, anywhere in a values file. */
function valuesAt(node: unknown, key: string): string[] {
  if (Array.isArray(node)) return node.flatMap((n) => valuesAt(n, key));
  if (node && typeof node === "object") {
    return Object.entries(node).flatMap(([k, v]) => (k === key && typeof v === "string" ? [v] : valuesAt(v, key)));
  }
  return [];
}

function renderedDefaultImages(): string[] {
  const helm = helmBinaries()[0];
  const images = new Set<string>();
  const add = (scenario: string, set: string[] = []) => {
    const values = parse(readFileSync(scenario, "utf8"));
    const chosenTags = valuesAt(values, "tag");
    const chosenDigests = valuesAt(values, "digest");
    const chosenRegistries = [...valuesAt(values, "registry"), ...valuesAt(values, "imageRegistry")];
    for (const image of imagesOf(helmTemplate(helm, chart, { valuesFiles: [scenario], set, tests: true }) as Obj[])) {
      const [name, digest] = image.split("@");
      const tag = name.split("/").at(-1)!.split(":")[1];
      const chosen =
        chosenTags.includes(tag) ||
        chosenDigests.includes(digest) ||
        chosenRegistries.some((registry) => image.startsWith(`${registry}/`));
      if (image === "auto" || chosen) continue;
      images.add(image);
    }
  };
  for (const scenario of scenarios) add(scenario);
  const flavors = schema.properties.ansibleForms.properties.rte.properties.flavor.enum as string[];
  for (const flavor of flavors)
    add(path.join(chart, "ci", "ansibleforms-sidecar.yaml"), [`ansibleForms.rte.flavor=${flavor}`]);
  return [...images].sort();
}

describe("Chart.yaml Artifact Hub metadata", () => {
  const annotations = chartYaml.annotations as Record<string, string>;

  it("artifacthub.io/images lists exactly the images the defaults render, each pinned", () => {
    const listed = parse(annotations["artifacthub.io/images"]) as { name: string; image: string }[];
    expect(listed.every((entry) => /^[a-z0-9-]+$/.test(entry.name) && /:[\w][\w.-]*$/.test(entry.image))).toBe(true);
    expect(new Set(listed.map((entry) => entry.name)).size).toBe(listed.length);
    const rendered = renderedDefaultImages();
    // The rendering covers every part, or the equality below proves little.
    expect(rendered.length).toBeGreaterThanOrEqual(8);
    expect(listed.map((entry) => entry.image).sort()).toEqual(rendered);
  });

  it("names the licence, the repository as home and source, maintainers and links", () => {
    const repository = String(packageJson.repository.url)
      .replace(/^git\+/, "")
      .replace(/\.git$/, "");
    expect(annotations["artifacthub.io/license"]).toBe(packageJson.license);
    expect(chartYaml.home).toBe(repository);
    expect(packageJson.homepage).toBe(repository);
    expect(chartYaml.sources).toEqual([repository]);
    expect(chartYaml.maintainers.length).toBeGreaterThan(0);
    const links = parse(annotations["artifacthub.io/links"]) as { name: string; url: string }[];
    expect(links.length).toBeGreaterThan(0);
    for (const link of links)
      expect(link.url.startsWith(`${repository}/`) || link.url === repository, link.url).toBe(true);
  });
});
