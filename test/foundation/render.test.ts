import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  generateConfigSchema,
  generateSettingsSchema,
  generateValuesSchema,
  SCHEMA_FILE,
  SETTINGS_SCHEMA_FILE,
  VALUES_SCHEMA_FILE,
} from "../../scripts/generate-config-schema";
import { REDACTED } from "../../testkit/offline/manifests";
import { repoRoot } from "../../testkit/harness/helm";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";

const tsx = path.join(repoRoot, "node_modules/.bin/tsx");
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-render-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(script: string, args: string[], cwd = repoRoot) {
  return spawnSync(tsx, [path.join(repoRoot, "scripts", script), ...args], { cwd, encoding: "utf8" });
}

/** What `npm run render` runs: the compiled renderer (scripts/render.mjs, an executable), with this test's Node first on PATH. */
function render(args: string[], cwd = repoRoot, env: NodeJS.ProcessEnv = {}) {
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`;
  return spawnSync(path.join(repoRoot, "scripts/render.mjs"), args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PATH, ...env },
  });
}

/** A throwaway project: the program (index.ts, components/) copied, node_modules linked. */
function copiedProject(prefix: string): string {
  const tree = mkdtempSync(path.join(scratch, prefix));
  for (const file of ["Pulumi.yaml", "Pulumi.dev.yaml", "index.ts"])
    writeFileSync(path.join(tree, file), readFileSync(path.join(repoRoot, file)));
  spawnSync("cp", ["-r", path.join(repoRoot, "components"), tree]);
  spawnSync("ln", ["-s", path.join(repoRoot, "node_modules"), path.join(tree, "node_modules")]);
  return tree;
}

const read = (dir: string) => readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f), "utf8")]);

describe("npm run render", () => {
  it("renders the dev stack offline to valid manifests, one file per object, no secret in any file", async () => {
    const out = path.join(scratch, "dev");
    const result = render(["dev", "--out", out]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const files = readdirSync(out).filter((f) => f.endsWith(".yaml") && !f.startsWith("_"));
    expect(files.length).toBeGreaterThan(0);
    const objects = files.map((f) => parse(readFileSync(path.join(out, f), "utf8")) as ObjectLike);
    await assertValidObjects(objects);
    expect((await Promise.all(objects.filter((o) => o.kind === "EnvoyFilter").map(checkEnvoyFilter))).flat()).toEqual(
      [],
    );
    for (const file of readdirSync(out)) {
      expect(readFileSync(path.join(out, file), "utf8")).not.toMatch(/offline-random-|offline-secret-config-/);
    }
    // The secret outputs are listed, redacted: the admin password and the RTE token for a second data centre.
    const outputs = parse(readFileSync(path.join(out, "_outputs.yaml"), "utf8")) as Record<string, unknown>;
    expect(outputs.ansibleFormsRteToken).toBe(REDACTED);
    expect(outputs.ansibleFormsAdminPassword).toBe(REDACTED);
  });

  it("renders the same files twice in a row (stable output), and over an old render leaves exactly the new files", () => {
    const a = path.join(scratch, "a");
    const b = path.join(scratch, "b");
    expect(render(["dev", "--out", a]).status).toBe(0);
    expect(render(["dev", "--out", b]).status).toBe(0);
    expect(read(a)).toEqual(read(b));
    // An object the stack no longer makes, and a file edited since: the next render removes and restores them.
    writeFileSync(path.join(a, "entryway-dev.configmap.gone.yaml"), "kind: ConfigMap\n");
    writeFileSync(path.join(a, "_outputs.yaml"), "edited: true\n");
    expect(render(["dev", "--out", a]).status).toBe(0);
    expect(read(a)).toEqual(read(b));
  });

  it("compiled, renders the same files as scripts/render.ts under tsx, without loading tsx or the TypeScript compiler", () => {
    const compiled = path.join(scratch, "compiled");
    const underTsx = path.join(scratch, "under-tsx");
    // A module required before the renderer that writes, at exit, every module the process loaded.
    const loaded = path.join(scratch, "loaded.json");
    const recorder = path.join(scratch, "record-loaded.cjs");
    writeFileSync(
      recorder,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))));\n`,
    );
    expect(render(["dev", "--out", compiled], repoRoot, { NODE_OPTIONS: `--require ${recorder}` }).status).toBe(0);
    expect(run("render.ts", ["dev", "--out", underTsx]).status).toBe(0);
    expect(read(compiled)).toEqual(read(underTsx));
    const modules = JSON.parse(readFileSync(loaded, "utf8")) as string[];
    expect(modules.some((m) => m.includes("/node_modules/@pulumi/pulumi/"))).toBe(true);
    expect(modules.filter((m) => /\/node_modules\/(tsx|typescript)\//.test(m))).toEqual([]);
  });

  it("compiles the program on every run: an edit shows in the next render", () => {
    const tree = copiedProject("edited-");
    const index = path.join(tree, "index.ts");
    const outputs = () =>
      parse(readFileSync(path.join(tree, "rendered/dev/_outputs.yaml"), "utf8")) as Record<string, unknown>;
    writeFileSync(index, `${readFileSync(index, "utf8")}export const edit = "first";\n`);
    expect(render(["dev"], tree).status).toBe(0);
    expect(outputs().edit).toBe("first");
    writeFileSync(index, readFileSync(index, "utf8").replace('"first"', '"second"'));
    expect(render(["dev"], tree).status).toBe(0);
    expect(outputs().edit).toBe("second");
  });

  it("names an unknown stack in one line, without a stack trace", () => {
    const result = render(["nosuch"]);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toMatch(
      /^render: unknown stack "nosuch": no Pulumi\.nosuch\.yaml \(known stacks: .*dev.*\)$/,
    );
  });

  it("names a program that does not compile in one line, with its file and line", () => {
    const tree = copiedProject("broken-");
    writeFileSync(
      path.join(tree, "components/index.ts"),
      `${readFileSync(path.join(tree, "components/index.ts"), "utf8")}export const broken = ;\n`,
    );
    const result = render(["dev"], tree);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^render: cannot compile the renderer and stack program: components\/index\.ts:\d+: Unexpected ";"$/,
      ),
    ]);
  });

  it("names a config that fails its schema in one line", () => {
    const tree = copiedProject("bad-");
    writeFileSync(
      path.join(tree, "Pulumi.bad.yaml"),
      "config:\n  entryway:stack:\n    namespace: Not_A_Name\n    colour: blue\n",
    );
    const result = render(["bad"], tree);
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^render: entryway:stack is invalid: .*"colour".*\/namespace must match pattern/);
  });
});

describe("npm run diff", () => {
  it("names a git ref that does not exist in one line", () => {
    const result = run("diff.ts", ["no-such-ref-anywhere"]);
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe('diff: "no-such-ref-anywhere" is not a commit in this repository');
  });

  it("prints the manifest diff between a ref and the working tree: a summary, one diff per object; --exit-code 1 when it differs, 0 when not", () => {
    // A throwaway repository whose working tree changes the namespace of the dev stack.
    const repo = mkdtempSync(path.join(scratch, "repo-"));
    for (const item of [
      "Pulumi.yaml",
      "Pulumi.dev.yaml",
      "index.ts",
      "components",
      "scripts",
      "testkit",
      "tsconfig.json",
    ]) {
      spawnSync("cp", ["-r", path.join(repoRoot, item), repo]);
    }
    spawnSync("ln", ["-s", path.join(repoRoot, "node_modules"), path.join(repo, "node_modules")]);
    const git = (...args: string[]) =>
      spawnSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: repo, encoding: "utf8" });
    writeFileSync(path.join(repo, ".gitignore"), "node_modules\n");
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "base");
    const same = run("diff.ts", ["--exit-code", "HEAD"], repo);
    expect(same.status, same.stderr).toBe(0);
    expect(same.stdout).toBe("no manifest changes from HEAD to working-tree\n");
    const dev = path.join(repo, "Pulumi.dev.yaml");
    writeFileSync(dev, readFileSync(dev, "utf8").replace(/namespace: \S+/, "namespace: entryway-changed"));
    const result = run("diff.ts", ["--exit-code", "HEAD"], repo);
    expect(result.status, result.stderr).toBe(1);
    expect(result.stdout).toMatch(
      /^\d+ objects differ from HEAD to working-tree: \d+ added, \d+ changed, \d+ removed$/m,
    );
    // The namespace is part of every namespaced object's identity: those are removed and added.
    expect(result.stdout).toMatch(/^ {2}Namespace: 2 added, 2 removed$/m);
    expect(result.stdout).toMatch(/^- {2}name: entryway-dev$/m);
    expect(result.stdout).toMatch(/^\+ {2}name: entryway-changed$/m);
    // Headers name the ref and the working tree, then the object's file.
    expect(result.stdout).toMatch(/^--- HEAD\/cluster\.namespace\.entryway-dev\.yaml\n\+\+\+ \/dev\/null$/m);
    expect(result.stdout).toMatch(
      /^--- \/dev\/null\n\+\+\+ working-tree\/cluster\.namespace\.entryway-changed\.yaml$/m,
    );

    // A ref from before the compiled renderer: its tree is rendered with tsx and scripts/render.ts.
    git("rm", "-q", "scripts/render.mjs");
    git("commit", "-qm", "no compiled renderer");
    git("checkout", "-q", "HEAD~1", "--", "scripts/render.mjs");
    const fromOldRef = run("diff.ts", ["HEAD"], repo);
    expect(fromOldRef.status, fromOldRef.stderr).toBe(0);
    expect(fromOldRef.stdout).toMatch(/^\+ {2}name: entryway-changed$/m);
  });
});

describe("stack config schema", () => {
  it("is in step with the StackConfig interface (npm run generate:schema)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(generateConfigSchema());
  });
  it("and the chart's values.schema.json is in step with the ChartValues interface (npm run generate:schema)", () => {
    expect(readFileSync(VALUES_SCHEMA_FILE, "utf8")).toBe(generateValuesSchema());
  });
  it("and the exec gateway's settings.schema.json with ExecGatewaySettings and the gateway's defaults (npm run generate:schema)", () => {
    expect(readFileSync(SETTINGS_SCHEMA_FILE, "utf8")).toBe(generateSettingsSchema());
  });
});
