/**
 * The published declarations (dist/**\/*.d.ts, what platform repos compile against): built here as
 * `npm run build` builds them (tsconfig.build.json), into a temporary folder. The public API is
 * what components/index.ts exports by name; the helpers the components share are exported between
 * their modules only, tagged `@internal`, and stripInternal drops them from the declarations, so
 * no deep import (entryway/dist/components/shared/names) reaches them either. The declarations
 * must still compile on their own, without skipLibCheck: a public type that refers to a stripped
 * one would leave a platform repo with an error, or with `any` under skipLibCheck. And a module
 * exports nothing else: an untagged helper would still reach a deep import.
 */
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import { COMPONENTS } from "./components";

const outDir = mkdtempSync(path.join(os.tmpdir(), "entryway-declarations-"));
let emitted: ts.Program;

/** What a module exports, as the type checker sees it. */
function exportedSymbols(program: ts.Program, file: string): ts.Symbol[] {
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`${file} is not in the program`);
  const module = program.getTypeChecker().getSymbolAtLocation(source);
  return module ? program.getTypeChecker().getExportsOfModule(module) : [];
}

/** The names a module exports. */
const exportsOf = (program: ts.Program, file: string): string[] => exportedSymbols(program, file).map((s) => s.name);

/** Every declaration under components/ exported with an `export` modifier and tagged `@internal`. */
function internalNames(): string[] {
  const names: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith(".ts")) {
        const source = ts.createSourceFile(file, ts.sys.readFile(file)!, ts.ScriptTarget.Latest, true);
        for (const statement of source.statements) {
          if (
            !ts.canHaveModifiers(statement) ||
            !ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
          )
            continue;
          if (!ts.getJSDocTags(statement).some((tag) => tag.tagName.text === "internal")) continue;
          const declared = ts.isVariableStatement(statement)
            ? statement.declarationList.declarations.map((d) => d.name.getText(source))
            : [(statement as ts.DeclarationStatement).name?.getText(source) ?? ""];
          names.push(...declared);
        }
      }
    }
  };
  visit(path.join(repoRoot, "components"));
  return names;
}

/** Every emitted declaration file under components/, reachable from index.d.ts or not. */
function emittedModules(): string[] {
  return readdirSync(path.join(outDir, "components"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".d.ts"))
    .map((file) => path.join(outDir, "components", file));
}

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(repoRoot, "tsconfig.build.json"),
    { outDir, emitDeclarationOnly: true, sourceMap: false },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("tsconfig.build.json cannot be read");
  const build = ts.createProgram(config.fileNames, config.options);
  const result = build.emit();
  expect(
    ts.formatDiagnostics(
      [...ts.getPreEmitDiagnostics(build), ...result.diagnostics],
      ts.createCompilerHost(config.options),
    ),
  ).toBe("");
  // The declarations import @pulumi/* and @entryway/ssh-config, as they do from a platform repo's node_modules.
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(outDir, "node_modules"), "dir");
  emitted = ts.createProgram(emittedModules(), {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: false,
    types: ["node"],
    typeRoots: [path.join(repoRoot, "node_modules/@types")],
  });
}, 300_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe("the published declarations", () => {
  it("export by name from components/index.d.ts what components/index.ts exports: the components, their args and the shapes and enums these use", () => {
    const source = ts.createProgram([path.join(repoRoot, "components/index.ts")], {
      strict: true,
      skipLibCheck: true,
      resolveJsonModule: true,
      esModuleInterop: true,
      noEmit: true,
    });
    const publicNames = exportsOf(source, path.join(repoRoot, "components/index.ts"));
    expect(exportsOf(emitted, path.join(outDir, "components/index.d.ts")).sort()).toEqual([...publicNames].sort());
    expect(publicNames).toEqual(
      expect.arrayContaining([
        ...COMPONENTS,
        "ExecGatewayArgs",
        "parseStackConfig",
        "SecretKeyRef",
        "NetworkProtocol",
        "ImageSettings",
      ]),
    );
  });

  it("leave out every @internal helper, in every module, so no deep import reaches one", () => {
    const internal = internalNames();
    expect(internal).toEqual(
      expect.arrayContaining([
        "objectName",
        "EXEC_RULES",
        "DEBUG_RULE",
        "REVIEW_RULES",
        "standardLabels",
        "dnsEgressRule",
        "restrictedPodSecurityContext",
        "validateExecGatewayArgs",
        "claimGatewayDomain",
        "seedProblems",
      ]),
    );
    const modules = emitted
      .getSourceFiles()
      .filter((f) => f.fileName.startsWith(outDir) && !f.fileName.includes("/node_modules/"));
    expect(modules.length).toBeGreaterThan(10);
    const leaked = modules.flatMap((module) =>
      exportsOf(emitted, module.fileName)
        .filter((name) => internal.includes(name))
        .map((name) => `${path.relative(outDir, module.fileName)}: ${name}`),
    );
    expect(leaked).toEqual([]);
  });

  it("export from every module only public names, the ones components/index.d.ts exports", () => {
    const checker = emitted.getTypeChecker();
    /** What an export is, through any chain of re-exports. */
    const target = (symbol: ts.Symbol) =>
      symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const publicApi = new Map(
      exportedSymbols(emitted, path.join(outDir, "components/index.d.ts")).map((s) => [s.name, target(s)]),
    );
    expect(publicApi.size).toBeGreaterThan(50);
    const modules = emittedModules();
    expect(modules.length).toBeGreaterThan(10);
    const notPublic = modules.flatMap((file) =>
      exportedSymbols(emitted, file)
        // By name and by what it is: a public value under another name is one more name to keep.
        .filter((symbol) => publicApi.get(symbol.name) !== target(symbol))
        .map((symbol) => `${path.relative(outDir, file)}: ${symbol.name}`),
    );
    expect(notPublic).toEqual([]);
  });

  it("compile on their own, without skipLibCheck: no public type refers to a stripped one", () => {
    const ours = emitted
      .getSourceFiles()
      .filter((f) => f.fileName.startsWith(outDir) && !f.fileName.includes("/node_modules/"))
      .flatMap((f) => [...emitted.getSyntacticDiagnostics(f), ...emitted.getSemanticDiagnostics(f)]);
    expect(ts.formatDiagnostics(ours, ts.createCompilerHost({}))).toBe("");
  });
});
