// No import cycle of any kind in the components and the gateway's sources: every relative import,
// re-export, type-only import (`import type`, `export type ... from`) and dynamic import() counts.
// eslint's import-x/no-cycle (eslint.config.mjs) leaves type-only imports out; this walks what the
// TypeScript compiler itself reads of each file (ts.preProcessFile), so a cycle of types fails too.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(__dirname, "../..");

/** Every .ts file under a folder (declarations and tests left out). */
function sources(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((file) => path.join(folder, file))
    .filter((file) => /\.m?ts$/.test(file) && !/\.d\.ts$|\.test\.ts$/.test(file) && statSync(file).isFile());
}

/** The file a relative specifier names (`./x.js` is ./x.ts, as the gateway's ESM imports write it); null for a package or a non-TypeScript file. */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(m?js)$/, "");
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** What each file imports, re-exports or imports dynamically, types included. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles.map((i) => resolveImport(file, i.fileName)).filter((t): t is string => t !== null);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

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
