/**
 * Every version a release ships, set in one step and checked against the release tag before
 * anything is pushed: the three npm packages (entryway, @entryway/gateway, @entryway/ssh-config)
 * and their lockfile entries, the exact @entryway/ssh-config version the other two depend on, the
 * chart's version and appVersion, and the tag of every default image of ours (`repository:
 * entryway/<image>` and the `tag` after it, as values.yaml, the components' ImageSettings and their
 * doc comments write it) in the components and the chart, so that `npm install entryway@<version>`
 * and the chart deploy the images of the same release; and the tag the docs tell platform repos to
 * add (`pulumi package add github.com/entryway/entryway@v<version>`, README.md and
 * docs/languages.md). `check` also wants the release's section in CHANGELOG.md, which is written
 * by hand.
 *
 *   tsx scripts/release/version.ts set 1.2.3     (then regenerates the config schema and the docs)
 *   tsx scripts/release/version.ts check v1.2.3  (the release workflow's first step)
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, parseDocument } from "yaml";

const ROOT = path.resolve(__dirname, "../..");
// package.json -> its key in package-lock.json's `packages`.
const PACKAGES: Record<string, string> = {
  "package.json": "",
  "packages/ssh-config/package.json": "packages/ssh-config",
  "gateway/package.json": "gateway",
};
const DEPENDENTS = ["package.json", "gateway/package.json"];
const SHARED = "@entryway/ssh-config";
const IMAGE_SOURCES = ["components", "charts/entryway/values.yaml", "charts/entryway/templates"];
// `repository: entryway/<image>` then, before any other repository, its `tag` (YAML, TS or prose).
const DEFAULT_IMAGE = /(repository:? "?entryway\/([a-z0-9-]+)"?(?:(?!repository)[^])*?\btag:? "?)([\w][\w.-]*)/g;
// The tag the docs tell platform repos to add (`pulumi package add github.com/entryway/entryway@v1.2.3`).
const TAGGED_DOCS = ["README.md", "docs/languages.md"];
const DOC_TAG = /(github\.com\/entryway\/entryway@v)(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/g;
// Each release has a section in the changelog, written by hand (Keep a Changelog: `## [1.2.3] - 2026-12-07`).
const CHANGELOG = "CHANGELOG.md";
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const TAG = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/;

/** The entry itself if it is a file, else its .ts, .yaml and .tpl files, relative to root. */
function filesUnder(root: string, entry: string): string[] {
  const full = path.join(root, entry);
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|yaml|tpl)$/.test(e.name))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

interface Manifest {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
}

/** Sets every version the release ships to `version` (the files check() reads, and nothing else). */
export function setVersion(version: string, root = ROOT): void {
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(path.join(root, file), change(readFileSync(path.join(root, file), "utf8")));
  const json = (file: string, change: (value: Record<string, unknown>) => void) =>
    edit(file, (text) => {
      const value = JSON.parse(text) as Record<string, unknown>;
      change(value);
      return `${JSON.stringify(value, null, 2)}\n`;
    });
  const bump = (manifest: Manifest) => {
    manifest.version = version;
    if (manifest.dependencies?.[SHARED]) manifest.dependencies[SHARED] = version;
  };
  for (const file of Object.keys(PACKAGES)) json(file, (pkg) => bump(pkg as Manifest));
  json("package-lock.json", (lock) => {
    lock.version = version;
    const packages = lock.packages as Record<string, Manifest>;
    for (const lockKey of Object.values(PACKAGES)) bump(packages[lockKey]);
  });
  edit("charts/entryway/Chart.yaml", (text) => {
    const chart = parseDocument(text);
    chart.set("version", version);
    chart.set("appVersion", version);
    return chart.toString({ lineWidth: 0, flowCollectionPadding: false });
  });
  for (const file of IMAGE_SOURCES.flatMap((entry) => filesUnder(root, entry))) {
    edit(file, (text) => text.replace(DEFAULT_IMAGE, (_, before: string) => `${before}${version}`));
  }
  for (const file of TAGGED_DOCS)
    edit(file, (text) => text.replace(DOC_TAG, (_, before: string) => `${before}${version}`));
}

/** Every place whose version differs from `version`, one line each (empty: all match). */
export function versionMismatches(version: string, root = ROOT): string[] {
  const read = (file: string) => readFileSync(path.join(root, file), "utf8");
  const problems: string[] = [];
  const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, Manifest> };
  for (const [file, lockKey] of Object.entries(PACKAGES)) {
    const pkg = JSON.parse(read(file)) as Manifest;
    if (pkg.version !== version) problems.push(`${file}: ${pkg.name} is ${pkg.version}`);
    if (lock.packages[lockKey]?.version !== version)
      problems.push(`package-lock.json: ${pkg.name} is ${lock.packages[lockKey]?.version}`);
  }
  for (const file of DEPENDENTS) {
    const wanted = (JSON.parse(read(file)) as Manifest).dependencies?.[SHARED];
    if (wanted !== version) problems.push(`${file}: depends on ${SHARED} ${wanted}`);
    const locked = lock.packages[PACKAGES[file]]?.dependencies?.[SHARED];
    if (locked !== version) problems.push(`package-lock.json: ${file} depends on ${SHARED} ${locked}`);
  }
  const chart = parse(read("charts/entryway/Chart.yaml")) as { version: string; appVersion: string };
  for (const key of ["version", "appVersion"] as const) {
    if (String(chart[key]) !== version) problems.push(`charts/entryway/Chart.yaml: ${key} is ${chart[key]}`);
  }
  for (const file of IMAGE_SOURCES.flatMap((entry) => filesUnder(root, entry))) {
    for (const match of read(file).matchAll(DEFAULT_IMAGE)) {
      if (match[3] !== version) problems.push(`${file}: entryway/${match[2]} tag ${match[3]}`);
    }
  }
  for (const file of TAGGED_DOCS) {
    for (const match of read(file).matchAll(DOC_TAG)) {
      if (match[2] !== version) problems.push(`${file}: ${match[0]}`);
    }
  }
  const heading = new RegExp(`^## \\[${version.replaceAll(".", "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m");
  if (!heading.test(read(CHANGELOG))) problems.push(`${CHANGELOG}: no section "## [${version}] - <date>"`);
  return problems;
}

function main(): number {
  const [command, argument = ""] = process.argv.slice(2);
  if (command === "set" && VERSION.test(argument)) {
    setVersion(argument);
    // The default image's tag is in doc comments the config schema and docs/reference.md are generated from.
    for (const script of ["generate:schema", "generate:docs"]) {
      if (spawnSync("npm", ["run", "--silent", script], { cwd: ROOT, stdio: "inherit" }).status !== 0) return 1;
    }
    console.log(`every version is ${argument}; commit, then tag v${argument}`);
    return 0;
  }
  const version = command === "check" ? TAG.exec(argument)?.[1] : undefined;
  if (!version) {
    process.stderr.write(
      "usage: tsx scripts/release/version.ts set <major>.<minor>.<patch> | check v<major>.<minor>.<patch>\n",
    );
    return 2;
  }
  const problems = versionMismatches(version);
  if (problems.length > 0) {
    process.stderr.write(`version: the tag is ${argument}, but:\n${problems.map((p) => `  ${p}\n`).join("")}`);
    return 1;
  }
  console.log(`every version is ${version}`);
  return 0;
}

if (require.main === module) process.exitCode = main();
