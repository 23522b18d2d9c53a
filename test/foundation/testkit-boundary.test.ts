// The test kit's direction: testkit/ (harnesses, stand-ins, clients, the offline runtime) is what
// tests, benchmarks and scripts import; it imports only itself and the product, and the product never
// imports it. eslint's import-x/no-restricted-paths (eslint.config.mjs) says so on every lint; this
// walks every import the compiler reads (types included) and shows the lint rule refusing both ways.
import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import { importGraph, sources } from "../../testkit/harness/import-graph";

/** Where the kit may reach: itself and the product's sources. */
const KIT_MAY_IMPORT = ["testkit/", "components/", "gateway/src/", "gateway/web/", "packages/", "policies/rules/"];
/** The product: what ships, or what the main job runs. */
const PRODUCT = ["components", "gateway/src", "bin"];

const inRepo = (file: string) => path.relative(repoRoot, file).split(path.sep).join("/");

describe("the test kit's import direction", () => {
  it("testkit/ imports only itself and the product, types included", () => {
    const graph = importGraph(sources(path.join(repoRoot, "testkit"), { tests: true }));
    expect(graph.size).toBeGreaterThan(40);
    const outward = [...graph].flatMap(([file, targets]) =>
      targets
        .map(inRepo)
        .filter(
          (target) => !KIT_MAY_IMPORT.some((allowed) => target.startsWith(allowed)) || target.endsWith(".test.ts"),
        )
        .map((target) => `${inRepo(file)} -> ${target}`),
    );
    expect(outward).toEqual([]);
  });

  it("the product imports nothing of testkit/", () => {
    const graph = importGraph(PRODUCT.flatMap((folder) => sources(path.join(repoRoot, folder))));
    const intoKit = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => inRepo(target).startsWith("testkit/")).map((t) => `${inRepo(file)} -> ${inRepo(t)}`),
    );
    expect(intoKit).toEqual([]);
  });

  it("eslint refuses a kit module importing a test, and a gateway source importing the kit", async () => {
    const eslint = new ESLint({ cwd: repoRoot });
    const refusals = async (file: string, code: string) =>
      (await eslint.lintText(code, { filePath: path.join(repoRoot, file) }))
        .flatMap((result) => result.messages)
        .filter((message) => message.ruleId === "import-x/no-restricted-paths")
        .map((message) => message.message);
    expect(
      await refusals(
        "testkit/harness/probe.ts",
        'export { gatewaySettings } from "../../test/exec-gateway/settings-document";\n',
      ),
    ).toEqual([expect.stringContaining("never the other way")]);
    expect(
      await refusals("gateway/src/probe.ts", 'export { repoRoot } from "../../testkit/harness/import-graph";\n'),
    ).toEqual([expect.stringContaining("does not import the test kit")]);
    expect(
      await refusals("test/foundation/probe.ts", 'export { repoRoot } from "../../testkit/harness/import-graph";\n'),
    ).toEqual([]);
  });
});
