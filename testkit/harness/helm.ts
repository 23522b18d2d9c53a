/**
 * The real helm binaries, both majors: Helm 4.3 and Helm 3.21 built from their Go modules
 * (helm.sh/helm/v4, helm.sh/helm/v3) by scripts/realcp/build.sh (tool `helm`), in the tool cache
 * outside the repository. A helm on PATH is not used: the tests pin the versions they prove.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { realTool } from "./realcp-tool";
import type { ObjectLike } from "./validate";

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const helmHome = path.join(repoRoot, ".ci", "cache", "helm", "home");

export interface Helm {
  readonly major: 3 | 4;
  readonly version: string;
  readonly path: string;
}

let cached: Helm[] | undefined;

/** Helm 4 and Helm 3; throws when either cannot be built. */
export function helmBinaries(): Helm[] {
  if (cached) return cached;
  const bin = realTool("helm");
  cached = ([4, 3] as const).map((major) => {
    const binary = path.join(bin, `helm${major}`);
    const version = execFileSync(binary, ["version", "--template", "{{.Version}}"], { encoding: "utf8" }).trim();
    if (!version.startsWith(`v${major}.`)) throw new Error(`${binary} is helm ${version}, expected major ${major}`);
    return { major, version, path: binary };
  });
  return cached;
}

export interface HelmResult {
  readonly ok: boolean;
  readonly output: string;
}

/** The environment helm talks to a cluster in: the repository's helm home, that cluster's kubeconfig. */
export function helmEnv(kubeconfig: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HELM_CACHE_HOME: helmHome,
    HELM_CONFIG_HOME: helmHome,
    HELM_DATA_HOME: helmHome,
    KUBECONFIG: kubeconfig,
  };
}

/** Runs helm; `env` adds to the environment (e.g. KUBECONFIG for a command that talks to a cluster). */
export function runHelm(helm: Helm, args: string[], env: NodeJS.ProcessEnv = {}): HelmResult {
  const result = spawnSync(helm.path, args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome, ...env },
  });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

export function helmLint(helm: Helm, chartDir: string, valuesFiles: string[] = []): HelmResult {
  return runHelm(helm, ["lint", "--strict", chartDir, ...valuesFiles.flatMap((f) => ["-f", f])]);
}

/**
 * `helm template` of a chart; throws with helm's own message when rendering fails. Without
 * `tests`, the `helm test` hooks are left out (--skip-tests): the objects are what `helm install`
 * applies.
 */
export function helmTemplate(
  helm: Helm,
  chartDir: string,
  options: { valuesFiles?: string[]; set?: string[]; releaseName?: string; namespace?: string; tests?: boolean } = {},
): ObjectLike[] {
  const result = runHelm(helm, [
    "template",
    options.releaseName ?? "entryway",
    chartDir,
    "--namespace",
    options.namespace ?? "entryway",
    ...(options.valuesFiles ?? []).flatMap((f) => ["-f", f]),
    ...(options.set ?? []).flatMap((s) => ["--set", s]),
    ...(options.tests ? [] : ["--skip-tests"]),
  ]);
  if (!result.ok) {
    throw new Error(`helm ${helm.major} template failed: ${result.output.trim()}`);
  }
  return parseAllDocuments(result.output)
    .map((doc) => doc.toJS() as ObjectLike | null)
    .filter((obj): obj is ObjectLike => obj !== null);
}

/**
 * The chart's install NOTES for a values file, rendered by the given Helm. Helm 4 renders them with
 * `install --dry-run=client`, which needs no cluster. Helm 3's dry run still asks a cluster for its
 * version, and its `template` never renders NOTES.txt and parses every other template as YAML; so
 * under Helm 3 a copy of the chart wraps NOTES.txt's unchanged text in a named template and renders
 * it, through Helm 3's own engine, as one JSON string in a probe manifest.
 */
export function helmNotes(helm: Helm, chartDir: string, valuesFile: string): string {
  if (helm.major >= 4) {
    const result = runHelm(helm, [
      "install",
      "entryway",
      chartDir,
      "--namespace",
      "entryway",
      "--dry-run=client",
      "-f",
      valuesFile,
    ]);
    if (!result.ok) throw new Error(`helm ${helm.major} install --dry-run failed: ${result.output.trim()}`);
    return result.output.slice(result.output.indexOf("NOTES:") + "NOTES:".length).trim();
  }
  const copy = mkdtempSync(path.join(os.tmpdir(), "entryway-notes-"));
  try {
    cpSync(chartDir, copy, { recursive: true });
    const notesFile = path.join(copy, "templates", "NOTES.txt");
    const text = readFileSync(notesFile, "utf8");
    rmSync(notesFile);
    writeFileSync(
      path.join(copy, "templates", "_notes-probe.tpl"),
      `{{- define "entryway.notesProbe" -}}\n${text}{{- end -}}\n`,
    );
    writeFileSync(
      path.join(copy, "templates", "notes-probe.yaml"),
      `notes: {{ include "entryway.notesProbe" . | toJson }}\n`,
    );
    const result = runHelm(helm, [
      "template",
      "entryway",
      copy,
      "--namespace",
      "entryway",
      "-f",
      valuesFile,
      "--show-only",
      "templates/notes-probe.yaml",
    ]);
    if (!result.ok) throw new Error(`helm ${helm.major} template of NOTES.txt failed: ${result.output.trim()}`);
    return String((parseAllDocuments(result.output)[0]?.toJS() as { notes: string }).notes).trim();
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The chart directories under charts/, and each one's ci/*.yaml scenarios. */
export function chartScenarios(): { chart: string; scenarios: string[] }[] {
  const chartsDir = path.join(repoRoot, "charts");
  return readdirSync(chartsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(chartsDir, entry.name, "Chart.yaml")))
    .map((entry) => {
      const chart = path.join(chartsDir, entry.name);
      const ciDir = path.join(chart, "ci");
      const scenarios = existsSync(ciDir)
        ? readdirSync(ciDir)
            .filter((f) => f.endsWith(".yaml"))
            .sort()
            .map((f) => path.join(ciDir, f))
        : [];
      return { chart, scenarios };
    });
}
