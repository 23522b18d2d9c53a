/**
 * Packages the chart for a release: a copy of charts/entryway with the release's version in
 * Chart.yaml (version and appVersion), its images pinned to the digests the release pushed
 * (pin-digests.ts), `helm lint --strict` of the result, then `helm package`. Prints the
 * package's path; the release workflow pushes it with `helm push <package> oci://...`.
 *
 *   tsx scripts/release/package-chart.ts --version <x.y.z> --out <dir> [--helm <helm>] <repository>=<sha256:digest>...
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";
import { parseMapping, pinDigests, type Pinned } from "./pin-digests";

const CHART = path.resolve(__dirname, "../../charts/entryway");
// Helm's chart versions are SemVer 2 (helm.sh/docs/topics/charts, "Charts and Versioning").
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export interface PackagedChart {
  /** The .tgz `helm package` wrote. */
  readonly file: string;
  readonly pinned: Pinned[];
}

function helm(binary: string, args: string[]): string {
  const result = spawnSync(binary, args, { encoding: "utf8" });
  if (result.error) throw new Error(`cannot run ${binary}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`helm ${args[0]} failed: ${`${result.stdout}${result.stderr}`.trim()}`);
  return result.stdout;
}

export function packageChart(options: {
  version: string;
  out: string;
  helm: string;
  digests: ReadonlyMap<string, string>;
  chart?: string;
}): PackagedChart {
  if (!SEMVER.test(options.version))
    throw new Error(`the version must be SemVer (e.g. 1.2.3), not ${JSON.stringify(options.version)}`);
  const staging = mkdtempSync(path.join(os.tmpdir(), "entryway-chart-"));
  try {
    const chart = path.join(staging, "entryway");
    cpSync(options.chart ?? CHART, chart, { recursive: true });
    const chartYaml = path.join(chart, "Chart.yaml");
    const meta = parseDocument(readFileSync(chartYaml, "utf8"));
    meta.set("version", options.version);
    meta.set("appVersion", options.version);
    writeFileSync(chartYaml, meta.toString({ lineWidth: 0, flowCollectionPadding: false }));
    const valuesYaml = path.join(chart, "values.yaml");
    const { text, pinned } = pinDigests(readFileSync(valuesYaml, "utf8"), options.digests);
    writeFileSync(valuesYaml, text);
    helm(options.helm, ["lint", "--strict", chart]);
    const output = helm(options.helm, ["package", chart, "--destination", path.resolve(options.out)]);
    // "Successfully packaged chart and saved it to: <path>"
    const file = /saved it to: (.+\.tgz)\s*$/m.exec(output)?.[1];
    if (!file) throw new Error(`helm package did not name its package: ${output.trim()}`);
    return { file, pinned };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function main(): void {
  try {
    const { values, positionals } = parseArgs({
      allowPositionals: true,
      options: { version: { type: "string" }, out: { type: "string" }, helm: { type: "string", default: "helm" } },
    });
    if (!values.version || !values.out)
      throw new Error(
        "usage: tsx scripts/release/package-chart.ts --version <x.y.z> --out <dir> [--helm <helm>] <repository>=<sha256:digest>...",
      );
    const { file, pinned } = packageChart({
      version: values.version,
      out: values.out,
      helm: values.helm,
      digests: parseMapping(positionals),
    });
    for (const p of pinned) console.error(`values.yaml: ${p.path}: ${p.from || "(none)"} -> ${p.to}`);
    console.log(file);
  } catch (error) {
    process.stderr.write(`package-chart: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) main();
