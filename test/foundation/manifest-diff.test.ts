/**
 * `entryway-diff` (bin/entryway-diff.ts, the command the package ships; `npm run diff` prints the
 * same report) run as a process on two renderings of the dev stack by the offline renderer: one
 * pair that differs, one that differs only by the order of keys and of the Pulumi resources.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { unifiedDiff, type ManifestDiff } from "../../bin/manifest-diff";
import { repoRoot } from "../../testkit/harness/helm";

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-manifest-diff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const base = path.join(scratch, "base");
const reordered = path.join(scratch, "reordered");
const changed = path.join(scratch, "changed");
const DEPLOYMENT = "entryway-dev.deployment.entryway-exec-gateway.yaml";
const NAMESPACE = "cluster.namespace.entryway-dev-connect.yaml";

function entrywayDiff(...args: string[]) {
  return spawnSync(
    path.join(repoRoot, "node_modules/.bin/tsx"),
    [path.join(repoRoot, "bin/entryway-diff.ts"), ...args],
    {
      cwd: scratch,
      encoding: "utf8",
    },
  );
}

/** Rewrites one YAML file of a rendering. */
function edit(dir: string, file: string, change: (value: Record<string, unknown>) => Record<string, unknown>) {
  const full = path.join(dir, file);
  writeFileSync(full, stringify(change(parse(readFileSync(full, "utf8")) as Record<string, unknown>)));
}

const reverseKeys = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).reverse());
const reverseLines = (dir: string, file: string) =>
  writeFileSync(
    path.join(dir, file),
    readFileSync(path.join(dir, file), "utf8").trim().split("\n").reverse().join("\n"),
  );

beforeAll(() => {
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`;
  const rendered = spawnSync(path.join(repoRoot, "scripts/render.mjs"), ["dev", "--out", base], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, PATH },
  });
  if (rendered.status !== 0) throw new Error(`render failed: ${rendered.stderr}`);
  // The same objects, keys in another order; the Pulumi resources listed in another order.
  cpSync(base, reordered, { recursive: true });
  edit(reordered, DEPLOYMENT, reverseKeys);
  reverseLines(reordered, "_resources.txt");
  // One object changed, one removed, one added, one Pulumi resource more.
  cpSync(reordered, changed, { recursive: true });
  edit(changed, DEPLOYMENT, (deployment) => ({ ...deployment, spec: { ...(deployment.spec as object), replicas: 7 } }));
  rmSync(path.join(changed, NAMESPACE));
  edit(changed, "entryway-dev.serviceaccount.entryway-exec-gateway.yaml", (account) => account);
  writeFileSync(
    path.join(changed, "entryway-dev.configmap.extra.yaml"),
    stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "extra", namespace: "entryway-dev" } }),
  );
  writeFileSync(
    path.join(changed, "_resources.txt"),
    `${readFileSync(path.join(changed, "_resources.txt"), "utf8")}\nkubernetes:core/v1:ConfigMap extra  (parent dev)\n`,
  );
}, 60_000);

describe("entryway-diff", () => {
  it("on two renderings that differ: a summary by kind, each object's diff under its own file's name, exit 1 with --exit-code", () => {
    const result = entrywayDiff("--exit-code", "base", "changed");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(1);
    const [summary, ...diffs] = result.stdout.split("\n\n");
    expect(summary.split("\n")).toEqual([
      "3 objects differ from base to changed: 1 added, 1 changed, 1 removed",
      "  ConfigMap: 1 added",
      "  Deployment: 1 changed",
      "  Namespace: 1 removed",
      "Pulumi resources: 1 added, 0 removed",
    ]);
    expect(diffs.map((diff) => diff.split("\n").slice(0, 2).join(" "))).toEqual([
      "--- /dev/null +++ changed/entryway-dev.configmap.extra.yaml",
      `--- base/${DEPLOYMENT} +++ changed/${DEPLOYMENT}`,
      `--- base/${NAMESPACE} +++ /dev/null`,
      "--- base/_resources.txt +++ changed/_resources.txt",
    ]);
    // The deployment's one change, nothing of the reordered keys.
    expect(diffs[1].split("\n").filter((line) => /^[-+](?![-+])/.test(line))).toEqual([
      "-  replicas: 1",
      "+  replicas: 7",
    ]);
    expect(diffs[3].trim().split("\n").slice(2)).toEqual(["+kubernetes:core/v1:ConfigMap extra  (parent dev)"]);
    // Without --exit-code, a difference is no failure.
    expect(entrywayDiff("base", "changed").status).toBe(0);
  });

  it("--json gives the same summary and changes as one document", () => {
    const result = entrywayDiff("--json", "--exit-code", "base", "changed");
    expect(result.status).toBe(1);
    const diff = JSON.parse(result.stdout) as ManifestDiff;
    expect(diff.changed).toBe(true);
    expect(diff.summary).toEqual({
      ConfigMap: { added: 1, changed: 0, removed: 0 },
      Deployment: { added: 0, changed: 1, removed: 0 },
      Namespace: { added: 0, changed: 0, removed: 1 },
    });
    expect(diff.objects.map((o) => `${o.change} ${o.kind} ${o.namespace}/${o.name}`)).toEqual([
      "added ConfigMap entryway-dev/extra",
      "changed Deployment entryway-dev/entryway-exec-gateway",
      "removed Namespace /entryway-dev-connect",
    ]);
    expect(diff.resources).toEqual({ added: ["kubernetes:core/v1:ConfigMap extra  (parent dev)"], removed: [] });
  });

  it("on two renderings that are the same but for the order of keys and of the Pulumi resources: no change, exit 0", () => {
    for (const [before, after] of [
      ["base", "base"],
      ["base", "reordered"],
    ]) {
      const result = entrywayDiff("--exit-code", before, after);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(`no manifest changes from ${before} to ${after}\n`);
      const json = JSON.parse(entrywayDiff("--json", "--exit-code", before, after).stdout) as ManifestDiff;
      expect(json).toMatchObject({ changed: false, summary: {}, objects: [], outputs: "" });
    }
  });

  it("reads one file of YAML documents too (as helm template prints them)", () => {
    const documents = (dir: string) =>
      [DEPLOYMENT, "entryway-dev.serviceaccount.entryway-exec-gateway.yaml"]
        .map((file) => readFileSync(path.join(dir, file), "utf8"))
        .join("---\n");
    writeFileSync(path.join(scratch, "before.yaml"), documents(base));
    writeFileSync(path.join(scratch, "after.yaml"), documents(changed));
    const result = entrywayDiff("--summary", "--exit-code", "before.yaml", "after.yaml");
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(
      "1 object differs from before.yaml to after.yaml: 0 added, 1 changed, 0 removed\n  Deployment: 1 changed\n",
    );
  });

  it("ends bad input with one line and exit 2 (1 means a difference)", () => {
    for (const [args, message] of [
      [["base"], "usage: entryway-diff [--exit-code] [--json | --summary] <before> <after>"],
      [["base", "nowhere"], "nowhere does not exist"],
      [["--colour", "base", "changed"], "unknown option --colour"],
    ] as const) {
      const result = entrywayDiff(...args);
      expect(result.status).toBe(2);
      expect(result.stderr).toBe(`entryway-diff: ${message}\n`);
      expect(result.stdout).toBe("");
    }
  });
});

describe("unifiedDiff", () => {
  it("writes hunks that patch(1) applies to the old text to give the new one", () => {
    // Pseudo-random edits (a fixed seed) of a 60-line text: replaced, inserted and deleted lines.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const dir = mkdtempSync(path.join(scratch, "patch-"));
    for (let round = 0; round < 40; round++) {
      const before = Array.from({ length: 60 }, (_, i) => `line ${i % 13}`);
      const after = [...before];
      for (let edits = random(8); edits >= 0; edits--) {
        const at = random(after.length + 1);
        const what = random(3);
        if (what === 0) after.splice(at, 1);
        else if (what === 1) after.splice(at, 0, `new ${round}.${edits}`);
        else after[Math.min(at, after.length - 1)] = `changed ${round}.${edits}`;
      }
      const [oldText, newText] = [before, after].map((lines) => `${lines.join("\n")}\n`);
      if (oldText === newText) continue;
      writeFileSync(path.join(dir, "file"), oldText);
      writeFileSync(path.join(dir, "diff"), unifiedDiff(oldText, newText, "a/file", "b/file"));
      // No fuzz; an offset would be reported ("Hunk #1 succeeded at 5 (offset 2 lines)").
      const patched = spawnSync("patch", ["--fuzz=0", "-p1", "-i", "diff"], { cwd: dir, encoding: "utf8" });
      expect(patched.stderr + patched.stdout).toBe("patching file file\n");
      expect(readFileSync(path.join(dir, "file"), "utf8")).toBe(newText);
    }
  });
});
