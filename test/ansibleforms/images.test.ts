/**
 * Every RTE container the project renders uses a published RTE layer,
 * ghcr.io/ansibleforms/ansibleforms-rte-(full|core|base) (upstream ansibleforms
 * server/src/runners/README.md; there is no plain ansibleforms-rte image), at the app's tag
 * unless the config sets the RTE's own (or pins it by digest), from ghcr.io unless a registry
 * mirror (global.imageRegistry) replaces it: in every chart scenario and in the dev and
 * prod-example stacks.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";
import { envOf, podSpec, type Container } from "./helpers";

const RTE_IMAGE = /^([^/]+)\/ansibleforms\/ansibleforms-rte-(full|core|base)(?::([^:@/]+)|@sha256:[a-f0-9]{64})$/;
const chart = path.join(repoRoot, "charts/entryway");
const scenarios = chartScenarios().find((c) => c.chart === chart)?.scenarios ?? [];
const chartDefaults = parse(readFileSync(path.join(chart, "values.yaml"), "utf8")) as Values;

interface RteValues {
  image?: { tag?: string };
}
interface Values {
  global?: { imageRegistry?: string };
  ansibleForms?: { image?: { tag?: string }; rte?: RteValues };
  remoteRte?: RteValues;
}

/** Every RTE container (it sets RTE_MAX_JOBS, in every mode) with the workload it is in. */
function rteContainers(objects: readonly ObjectLike[]): { where: string; container: Container }[] {
  return objects
    .filter((o) => (o.spec as { template?: unknown } | undefined)?.template)
    .flatMap((o) => podSpec(o).containers.map((container) => ({ where: `${o.kind}/${o.metadata?.name}`, container })))
    .filter(({ container }) => envOf(container, "RTE_MAX_JOBS") !== undefined);
}

/** What each RTE image must be: its own tag when the config overrides it, else the app's (a digest pins it instead). */
function expectRteImages(
  objects: readonly ObjectLike[],
  appTag: string,
  ownTags: { app?: string; remote?: string },
  registry = "ghcr.io",
): number {
  const found = rteContainers(objects);
  for (const { where, container } of found) {
    const match = RTE_IMAGE.exec(container.image);
    expect(match, `${where} runs ${container.image}`).not.toBeNull();
    expect(match![1], `${where} registry`).toBe(registry);
    const own = where.startsWith("StatefulSet/") ? ownTags.remote : ownTags.app;
    if (match![3] !== undefined) expect(match![3], `${where} tag`).toBe(own || appTag);
  }
  return found.length;
}

describe("every rendered RTE uses a published layer at the app's tag", () => {
  it.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("every chart scenario (%s)", (_label, helm) => {
    let seen = 0;
    for (const scenario of scenarios) {
      const values = parse(readFileSync(scenario, "utf8")) as Values;
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario] });
      const appTag = values.ansibleForms?.image?.tag || chartDefaults.ansibleForms!.image!.tag!;
      seen += expectRteImages(
        objects,
        appTag,
        { app: values.ansibleForms?.rte?.image?.tag, remote: values.remoteRte?.image?.tag },
        values.global?.imageRegistry || undefined,
      );
    }
    // The sidecar, local-files, database and remote-rte scenarios carry RTEs: the walk saw them.
    expect(seen).toBeGreaterThanOrEqual(4);
  });

  it.each(["dev", "prod.example"])("the %s stack", async (stack) => {
    const document = parse(readFileSync(path.join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as {
      config: Record<string, unknown>;
    };
    const config = parseStackConfig(document.config["entryway:stack"]);
    const { manifests } = await render(() => new Stack(stack, config));
    const seen = expectRteImages(
      manifests as ObjectLike[],
      config.ansibleForms?.image?.tag || chartDefaults.ansibleForms!.image!.tag!,
      {
        app: config.ansibleForms?.rte?.image?.tag,
        remote: config.remoteRte?.image?.tag,
      },
    );
    expect(seen).toBeGreaterThanOrEqual(1);
  });

  it("the walk rejects the image that does not exist and a tag that left the app's", () => {
    const workload = (image: string): ObjectLike =>
      ({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "x" },
        spec: {
          template: { spec: { containers: [{ name: "rte", image, env: [{ name: "RTE_MAX_JOBS", value: "1" }] }] } },
        },
      }) as ObjectLike;
    expect(() => expectRteImages([workload("ghcr.io/ansibleforms/ansibleforms-rte:7.3.0")], "7.3.0", {})).toThrow(
      /runs ghcr.io\/ansibleforms\/ansibleforms-rte:7.3.0/,
    );
    expect(() => expectRteImages([workload("ghcr.io/ansibleforms/ansibleforms-rte-full:7.2.0")], "7.3.0", {})).toThrow(
      /tag/,
    );
  });
});
