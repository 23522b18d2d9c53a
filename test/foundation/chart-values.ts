/**
 * Values files for the chart's tests (charts/entryway), in a scratch folder of the suite's own that
 * goes when the suite ends. Each is JSON, which YAML reads, with every control character and line
 * separator escaped: Helm gets these exact strings (a raw one would be refused, or read as a line
 * break by Helm's own YAML reader before any template ran).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { jsonLine } from "../../gateway/src/log";
import { repoRoot, runHelm, type Helm, type HelmResult } from "../../testkit/harness/helm";

export const chart = path.join(repoRoot, "charts/entryway");

/** Call at a suite's top level: its scratch folder is removed after all its tests. */
export function chartValues(name: string) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `entryway-${name}-`));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let counter = 0;
  /** A new values file holding `values`. */
  const valuesFile = (values: unknown): string => {
    const file = path.join(scratch, `values-${++counter}.yaml`);
    writeFileSync(file, jsonLine(values));
    return file;
  };
  /** `helm template` of the chart (release and namespace `entryway`, no test hooks) with `values`; its result, failed or not. */
  const templateResult = (helm: Helm, values: unknown, extra: string[] = []): HelmResult =>
    runHelm(helm, [
      "template",
      "entryway",
      chart,
      "--namespace",
      "entryway",
      "--skip-tests",
      "-f",
      valuesFile(values),
      ...extra,
    ]);
  return { scratch, valuesFile, templateResult };
}
