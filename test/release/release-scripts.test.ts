/**
 * The release workflow's steps that can run here (.github/workflows/release.yml): pinning the
 * chart's images to the pushed digests (scripts/release/pin-digests.ts) on the real values.yaml,
 * packaging the pinned chart with real helm (scripts/release/package-chart.ts), which must still
 * pass `helm lint --strict` under Helm 3 and 4 and render the digests, and setting and checking
 * every version a release ships (scripts/release/version.ts).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageChart } from "../../scripts/release/package-chart";
import { parseMapping, pinDigests, repositoryOf } from "../../scripts/release/pin-digests";
import { setVersion, versionMismatches } from "../../scripts/release/version";
import { helmBinaries, helmLint, helmTemplate, repoRoot } from "../../testkit/harness/helm";

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-release-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const chartDir = path.join(repoRoot, "charts/entryway");
const valuesText = readFileSync(path.join(chartDir, "values.yaml"), "utf8");
const GATEWAY = "ghcr.io/entryway/exec-gateway";
const WORKSPACE = "ghcr.io/entryway/ssh-workspace";
const digest = (hex: string) => `sha256:${hex.repeat(64)}`;
const tsx = path.join(repoRoot, "node_modules/tsx/dist/cli.mjs");

describe("repositoryOf (distribution's reference grammar)", () => {
  it.each([
    ["ghcr.io/entryway/exec-gateway:0.1.0", "ghcr.io/entryway/exec-gateway"],
    ["ghcr.io/entryway/exec-gateway", "ghcr.io/entryway/exec-gateway"],
    [`ghcr.io/entryway/exec-gateway:0.1.0@${digest("c")}`, "ghcr.io/entryway/exec-gateway"],
    [`ghcr.io/entryway/exec-gateway@${digest("c")}`, "ghcr.io/entryway/exec-gateway"],
    ["localhost:5000/entryway/exec-gateway:1.2", "localhost:5000/entryway/exec-gateway"],
    ["localhost:5000/entryway/exec-gateway", "localhost:5000/entryway/exec-gateway"],
    ["mysql:8.4", "mysql"],
  ])("%s -> %s", (reference, repository) => {
    expect(repositoryOf(reference)).toBe(repository);
  });
});

describe("pin-digests", () => {
  it("pins both images a release builds in the chart's values.yaml (the gateway's and the workspaces' default) and changes nothing else, comments included", () => {
    const { text, pinned } = pinDigests(
      valuesText,
      parseMapping([`${GATEWAY}=${digest("a")}`, `${WORKSPACE}=${digest("b")}`]),
    );
    expect(pinned).toEqual([
      { path: "execGateway.image.digest", from: "", to: digest("a") },
      { path: "workspaceDefaults.image.digest", from: "", to: digest("b") },
    ]);
    const expected = valuesText
      .replace(/(repository: entryway\/exec-gateway\n(?:.*\n){3}\s+digest: )""/, `$1"${digest("a")}"`)
      .replace(/(repository: entryway\/ssh-workspace\n(?:.*\n){3}\s+digest: )""/, `$1"${digest("b")}"`);
    expect(expected).not.toBe(valuesText);
    expect(text).toBe(expected);
  });

  it("pins list items and the registry/repository/digest layout, and leaves other repositories alone", () => {
    const values = [
      "workspaces:",
      `  - name: alice`,
      `    image: ${WORKSPACE}:0.1.0`,
      "  - name: bob",
      "    image: registry.example.com/team-b/workspace:1.2.0",
      "  - name: carol",
      `    image: ${WORKSPACE}-debug:0.1.0 # a longer name is another repository`,
      "other:",
      "  image:",
      "    registry: ghcr.io",
      "    repository: entryway/exec-gateway",
      "    tag: 0.1.0",
      `    digest: "${digest("0")}"`,
      "database:",
      "  image: mysql:8.4",
      "",
    ].join("\n");
    const { text, pinned } = pinDigests(
      values,
      parseMapping([`${WORKSPACE}=${digest("b")}`, `${GATEWAY}=${digest("a")}`]),
    );
    expect(pinned.map((p) => p.path)).toEqual(["workspaces[0].image", "other.image.digest"]);
    expect(parse(text)).toEqual({
      workspaces: [
        { name: "alice", image: `${WORKSPACE}@${digest("b")}` },
        { name: "bob", image: "registry.example.com/team-b/workspace:1.2.0" },
        { name: "carol", image: `${WORKSPACE}-debug:0.1.0` },
      ],
      other: { image: { registry: "ghcr.io", repository: "entryway/exec-gateway", tag: "0.1.0", digest: digest("a") } },
      database: { image: "mysql:8.4" },
    });
    expect(text).toContain("# a longer name is another repository");
  });

  it("refuses a repository no image uses", () => {
    expect(() =>
      pinDigests(valuesText, parseMapping([`${GATEWAY}=${digest("a")}`, `${WORKSPACE}-debug=${digest("b")}`])),
    ).toThrow(`no image in the values uses ${WORKSPACE}-debug: nothing to pin`);
  });

  it.each([
    [[`${GATEWAY}=sha256:abc`], /digest of ghcr\.io\/entryway\/exec-gateway must be sha256:<64 hex digits>/],
    [[`${GATEWAY}:0.1.0=${digest("a")}`], /is not <repository>=<digest>/],
    [[`${GATEWAY}`], /is not <repository>=<digest>/],
    [[`${GATEWAY}=${digest("a")}`, `${GATEWAY}=${digest("b")}`], /given twice/],
    [[], /name at least one/],
  ])("refuses the mapping %j", (args, message) => {
    expect(() => parseMapping(args)).toThrow(message);
  });

  it("as a command: pins a values file in place, one line per image; an error is one line and exit 1", () => {
    const file = path.join(scratch, "values.yaml");
    copyFileSync(path.join(chartDir, "values.yaml"), file);
    const script = path.join(repoRoot, "scripts/release/pin-digests.ts");
    const ok = spawnSync(process.execPath, [tsx, script, file, `${GATEWAY}=${digest("d")}`], { encoding: "utf8" });
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toBe(`${file}: execGateway.image.digest: (none) -> ${digest("d")}\n`);
    expect(ok.status).toBe(0);
    expect(parse(readFileSync(file, "utf8")).execGateway.image.digest).toBe(digest("d"));
    const bad = spawnSync(process.execPath, [tsx, script, file, `${GATEWAY}=sha256:short`], { encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      `pin-digests: the digest of ${GATEWAY} must be sha256:<64 hex digits>, not "sha256:short"\n`,
    );
  });
});

describe("package-chart", () => {
  const [helm4, helm3] = helmBinaries();
  const out = path.join(scratch, "packages");

  it("packages the release's chart: its version, the digests pinned, lint --strict under Helm 3 and 4, and the Deployment runs the pinned image", () => {
    const { file, pinned } = packageChart({
      version: "1.2.3",
      out,
      helm: helm4.path,
      digests: parseMapping([`${GATEWAY}=${digest("e")}`, `${WORKSPACE}=${digest("f")}`]),
    });
    expect(file).toBe(path.join(out, "entryway-1.2.3.tgz"));
    expect(pinned.map((p) => p.to)).toEqual([digest("e"), digest("f")]);
    for (const helm of [helm4, helm3]) {
      const lint = helmLint(helm, file);
      expect(lint.output).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      expect(lint.ok, lint.output).toBe(true);
    }
    const objects = helmTemplate(helm4, file, {
      valuesFiles: [path.join(chartDir, "ci/exec-gateway-kubernetes.yaml")],
    });
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === "entryway-exec-gateway") as
      { spec: { template: { spec: { containers: { image: string }[] } } } } | undefined;
    expect(deployment?.spec.template.spec.containers[0].image).toBe(`${GATEWAY}@${digest("e")}`);
    const workspaces = helmTemplate(helm4, file, { valuesFiles: [path.join(chartDir, "ci/ssh-one-workspace.yaml")] });
    const workspace = workspaces.find((o) => o.kind === "StatefulSet") as
      { spec: { template: { spec: { containers: { image: string }[] } } } } | undefined;
    expect(workspace?.spec.template.spec.containers[0].image).toBe(`${WORKSPACE}@${digest("f")}`);
    const meta = spawnSync("tar", ["-xzOf", file, "entryway/Chart.yaml"], { encoding: "utf8" });
    expect(parse(meta.stdout)).toMatchObject({ name: "entryway", version: "1.2.3", appVersion: "1.2.3" });
  });

  it("refuses a version that is not SemVer (a tag's leading v stays out)", () => {
    expect(() =>
      packageChart({ version: "v1.2.3", out, helm: helm4.path, digests: parseMapping([`${GATEWAY}=${digest("e")}`]) }),
    ).toThrow(/the version must be SemVer/);
  });
});

describe("version (set before tagging, checked by the release's first job)", () => {
  const rootVersion = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string })
    .version;
  const VERSIONED = [
    "package.json",
    "package-lock.json",
    "packages/ssh-config/package.json",
    "gateway/package.json",
    "charts/entryway",
    "components",
    "README.md",
    "docs/languages.md",
  ];

  it("finds every version of the repository in agreement: packages, chart, default images, the tag README tells platform repos to add, the changelog's section", () => {
    expect(versionMismatches(rootVersion)).toEqual([]);
    expect(readFileSync(path.join(repoRoot, "README.md"), "utf8")).toContain(
      `pulumi package add github.com/entryway/entryway@v${rootVersion}`,
    );
  });

  it("`set` changes exactly the version lines, after which `check` passes for the new version and names every old one", () => {
    const copy = path.join(scratch, "versioned");
    for (const entry of VERSIONED) cpSync(path.join(repoRoot, entry), path.join(copy, entry), { recursive: true });
    setVersion("7.8.9", copy);
    // The release's changelog section is written by hand; check wants it.
    writeFileSync(path.join(copy, "CHANGELOG.md"), "# Changelog\n\n## [7.8.9] - 2026-12-08\n");
    expect(versionMismatches("7.8.9", copy)).toEqual([]);
    const old = versionMismatches(rootVersion, copy);
    expect(old).toEqual(
      expect.arrayContaining([
        "package.json: entryway is 7.8.9",
        "package-lock.json: @entryway/gateway is 7.8.9",
        "gateway/package.json: depends on @entryway/ssh-config 7.8.9",
        "charts/entryway/Chart.yaml: appVersion is 7.8.9",
        "charts/entryway/values.yaml: entryway/exec-gateway tag 7.8.9",
        "charts/entryway/values.yaml: entryway/ssh-workspace tag 7.8.9",
        "components/ssh/ssh-workspace.ts: entryway/ssh-workspace tag 7.8.9",
        "README.md: github.com/entryway/entryway@v7.8.9",
        `CHANGELOG.md: no section "## [${rootVersion}] - <date>"`,
      ]),
    );
    // Lines changed per file: the versions only, nothing reformatted.
    const changed: Record<string, number> = {};
    for (const entry of VERSIONED) {
      const files = statSync(path.join(copy, entry)).isDirectory()
        ? readdirSync(path.join(copy, entry), { recursive: true, encoding: "utf8" }).map((f) => path.join(entry, f))
        : [entry];
      for (const file of files.filter((f) => statSync(path.join(copy, f)).isFile())) {
        const [before, after] = [repoRoot, copy].map((root) => readFileSync(path.join(root, file), "utf8").split("\n"));
        expect(after.length, file).toBe(before.length);
        const lines = after.filter((line, index) => line !== before[index]).length;
        if (lines > 0) changed[file] = lines;
      }
    }
    expect(changed).toEqual({
      "package.json": 2,
      "package-lock.json": 6,
      "packages/ssh-config/package.json": 1,
      "gateway/package.json": 2,
      "charts/entryway/Chart.yaml": 2,
      "charts/entryway/values.yaml": 2,
      "components/exec-gateway/config.ts": 1,
      "components/exec-gateway/contract.ts": 1,
      "components/ssh/config.ts": 1,
      "components/ssh/ssh-workspace.ts": 1,
      "README.md": 1,
      "docs/languages.md": 1,
    });
  });
});
