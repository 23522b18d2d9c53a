/**
 * The SSH front ends the gateway tests run on: the dev stack (Pulumi.dev.yaml through the Stack
 * under the offline runtime) and every `ssh-*` scenario of the chart (helm template).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { chartScenarios, helmTemplate, repoRoot, type Helm } from "../../testkit/harness/helm";
import { outputOf, render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";

export const chart = path.join(repoRoot, "charts/entryway");

/** Pulumi.dev.yaml's `entryway:stack` section. */
export function devStackConfig(): Record<string, unknown> {
  const dev = parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as {
    config: Record<string, Record<string, unknown>>;
  };
  return dev.config["entryway:stack"];
}

/** A stack config rendered through the Stack: its objects, and the ssh config it outputs. One at a time (the offline runtime records one program). */
export async function renderStack(
  config: Record<string, unknown>,
  where: string,
): Promise<{ manifests: ObjectLike[]; sshConfig: string }> {
  let stack: Stack | undefined;
  const { manifests } = await render(() => {
    stack = new Stack("dev", parseStackConfig(config, where));
  });
  return { manifests: manifests as ObjectLike[], sshConfig: await outputOf(stack!.sshConfig!) };
}

/** The chart's `ssh-*` scenarios (values files), in name order. */
export function sshScenarios(): string[] {
  return chartScenarios()
    .find((c) => c.chart === chart)!
    .scenarios.filter((s) => path.basename(s).startsWith("ssh-"));
}

/** A scenario as `helm template` renders it (release `entryway`, namespace `entryway`). */
export function renderScenario(helm: Helm, scenario: string, set: string[] = []): ObjectLike[] {
  return helmTemplate(helm, chart, { valuesFiles: [scenario], set });
}
