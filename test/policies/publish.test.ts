/**
 * The policy pack as `pulumi policy publish` ships it: for a nodejs pack the CLI uploads what
 * `npm pack` makes of the pack's folder (pulumi/pulumi pkg/backend/httpstate/policypack.go,
 * `Publish`: `npm.Pack(op.PlugCtx.Pwd, ...)`), and whoever enforces it installs that tarball's own
 * dependencies. So the tarball is unpacked outside the repository, given only the packages its
 * package.json declares, and started as the engine starts a pack; it must serve all its policies.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entrywayPolicies } from "../../policies/rules";
import { repoRoot } from "../../testkit/harness/helm";
import {
  Empty,
  grpc,
  pulumiRequire,
  startPulumiPlugin,
  unary,
  type RunningPlugin,
} from "../../testkit/harness/pulumi-plugin";

/* eslint-disable @typescript-eslint/no-explicit-any */
const { AnalyzerClient } = pulumiRequire("@pulumi/pulumi/proto/analyzer_grpc_pb");

const packDir = path.join(repoRoot, "policies");
const packManifest = JSON.parse(readFileSync(path.join(packDir, "package.json"), "utf8"));
const rootManifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

let workDir: string;
let packed: { files: { path: string }[]; filename: string };
let pack: RunningPlugin;
let client: any;

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "entryway-policy-pack-"));
  [packed] = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--pack-destination", workDir], { cwd: packDir, encoding: "utf8" }),
  );
  execFileSync("tar", ["-xzf", path.join(workDir, packed.filename), "-C", workDir]);
  const unpacked = path.join(workDir, "package");
  // Only what the pack declares, each as installed for the tests (its own dependencies resolve
  // from where it really lives).
  for (const name of Object.keys({ ...packManifest.dependencies, ...packManifest.devDependencies })) {
    mkdirSync(path.dirname(path.join(unpacked, "node_modules", name)), { recursive: true });
    symlinkSync(path.join(repoRoot, "node_modules", name), path.join(unpacked, "node_modules", name), "dir");
  }
  pack = await startPulumiPlugin("run-policy-pack", ["127.0.0.1:1", "."], unpacked);
  client = new AnalyzerClient(pack.address, grpc.credentials.createInsecure());
}, 200_000);

afterAll(() => {
  client?.close();
  pack?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("the policy pack published on its own (npm pack of policies/)", () => {
  it("ships the pack's manifest, sources (one file per rule, its tests left out), the generated contract and compiler settings, nothing else", () => {
    const rules = entrywayPolicies.map((policy) => `rules/${policy.name.replace(/^entryway-/, "")}.ts`);
    const expected = [
      "PulumiPolicy.yaml",
      "contract.json",
      "index.ts",
      "package.json",
      "rules/helpers.ts",
      "rules/index.ts",
      ...rules,
      "tsconfig.json",
    ];
    expect(packed.files.map((f) => f.path).sort()).toEqual(expected.sort());
  });

  it("serves every policy from the tarball with only its declared dependencies", async () => {
    const info = await unary<any>(client, "getAnalyzerInfo", new Empty());
    expect(info.getName()).toBe("entryway");
    expect(
      info
        .getPoliciesList()
        .map((policy: { getName(): string }) => policy.getName())
        .sort(),
    ).toEqual(entrywayPolicies.map((policy) => policy.name).sort());
  });

  it("is versioned with the package and depends on what the tests ran (Pulumi Cloud versions a nodejs pack by package.json)", () => {
    expect(packManifest.version).toBe(rootManifest.version);
    for (const [name, range] of Object.entries({ ...packManifest.dependencies, ...packManifest.devDependencies })) {
      expect(range, name).toBe(rootManifest.dependencies[name] ?? rootManifest.devDependencies[name]);
    }
  });
});
