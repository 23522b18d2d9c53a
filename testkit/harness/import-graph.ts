// What a module imports, as the TypeScript compiler reads it (ts.preProcessFile): every relative
// import, re-export, type-only import and dynamic import(). The import-cycle and test-kit boundary
// tests walk it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/** Every .ts file under a folder (declarations left out; tests too unless asked for). */
export function sources(folder: string, { tests = false } = {}): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((file) => path.join(folder, file))
    .filter(
      (file) =>
        /\.m?ts$/.test(file) &&
        !/\.d\.ts$/.test(file) &&
        (tests || !/\.test\.ts$/.test(file)) &&
        !file.includes(`${path.sep}node_modules${path.sep}`) &&
        statSync(file).isFile(),
    );
}

/** The file a relative specifier names (`./x.js` is ./x.ts, as the gateway's ESM imports write it); null for a package or a non-TypeScript file. */
export function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(m?js)$/, "");
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** What each file imports, re-exports or imports dynamically, types included. */
export function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles.map((i) => resolveImport(file, i.fileName)).filter((t): t is string => t !== null);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}
