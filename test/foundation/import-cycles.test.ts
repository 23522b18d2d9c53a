// No import cycle of any kind in the components and the gateway's sources: every relative import,
// re-export, type-only import (`import type`, `export type ... from`) and dynamic import() counts.
// eslint's import-x/no-cycle (eslint.config.mjs) leaves type-only imports out; this walks what the
// TypeScript compiler itself reads of each file (ts.preProcessFile), so a cycle of types fails too.
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import { importGraph, sources } from "../../testkit/harness/import-graph";

/** Every cycle as the files on it, each found once (from its first file in the walk). */
function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (file: string) => {
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (onStack.has(next)) cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(file);
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return cycles;
}

const relative = (cycle: string[]) => cycle.map((file) => path.relative(repoRoot, file)).join(" -> ");

describe("import cycles", () => {
  it("finds a cycle of type-only imports (the check itself)", () => {
    const a = path.join(repoRoot, "a.ts");
    const b = path.join(repoRoot, "b.ts");
    const c = path.join(repoRoot, "c.ts");
    const graph = new Map([
      [a, [b]],
      [b, [c]],
      [c, [a]],
    ]);
    expect(importCycles(graph).map(relative)).toEqual(["a.ts -> b.ts -> c.ts -> a.ts"]);
    expect(
      importCycles(
        new Map([
          [a, [b]],
          [b, []],
        ]),
      ),
    ).toEqual([]);
    const { importedFiles } = ts.preProcessFile(
      'import type { A } from "./a.js";\nexport type { B } from "./b";\nconst c = await import("./c.js");',
      true,
      true,
    );
    expect(importedFiles.map((i) => i.fileName)).toEqual(["./a.js", "./b", "./c.js"]);
  });

  for (const folder of ["components", "gateway/src"]) {
    it(`none in ${folder}/, type-only imports included`, () => {
      const graph = importGraph(sources(path.join(repoRoot, folder)));
      expect(graph.size).toBeGreaterThan(10);
      expect(importCycles(graph).map(relative)).toEqual([]);
    });
  }
});
