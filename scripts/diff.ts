/**
 * npm run diff -- [--exit-code] [--json | --summary] <git-ref> [stack]
 *
 * The review diff that needs no credentials: renders the stack (default: dev) at <git-ref> and
 * in the working tree, and prints the manifest-level difference between the two (a summary of the
 * objects added, changed and removed by kind, then each object's diff: bin/manifest-diff.ts, which
 * the package ships as `entryway-diff`). Exits 0, or 1 with --exit-code when anything differs, and
 * 2 on bad input or a failed render.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ManifestDiffError, OPTIONS_USAGE, parseDiffOptions, reportRenderings } from "../bin/manifest-diff";

const root = process.cwd();

function fail(message: string): never {
  console.error(`diff: ${message}`);
  process.exit(2);
}

function git(args: string[], cwd = root): { ok: boolean; out: string } {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" });
  return { ok: result.status === 0, out: `${result.stdout}${result.stderr}`.trim() };
}

/**
 * Renders one tree with that tree's own renderer: the compiled one (scripts/render.mjs, what
 * `npm run render` runs: less memory) where the tree has it, otherwise `tsx scripts/render.ts`
 * (refs from before render.mjs). Either runs on this process's Node.
 */
function render(tree: string, stack: string, outDir: string, label: string): void {
  const compiled = path.join(tree, "scripts", "render.mjs");
  const source = path.join(tree, "scripts", "render.ts");
  if (!existsSync(source)) throw new ManifestDiffError(`${label} has no offline renderer (scripts/render.ts)`);
  const [command, args] = existsSync(compiled)
    ? [compiled, [stack, "--out", outDir]]
    : [path.join(root, "node_modules", ".bin", "tsx"), ["scripts/render.ts", stack, "--out", outDir]];
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`;
  const result = spawnSync(command, args, { cwd: tree, encoding: "utf8", env: { ...process.env, PATH } });
  if (result.status !== 0) {
    throw new ManifestDiffError(
      `rendering ${label} failed: ${(result.stderr || result.stdout).trim().split("\n").pop()}`,
    );
  }
}

function main(): void {
  let options;
  try {
    options = parseDiffOptions(process.argv.slice(2));
  } catch (error) {
    fail((error as ManifestDiffError).message);
  }
  const [ref, stack = "dev", ...rest] = options.positional;
  if (!ref || rest.length > 0) fail(`usage: npm run diff -- ${OPTIONS_USAGE} <git-ref> [stack]`);
  if (!git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).ok) {
    fail(`"${ref}" is not a commit in this repository`);
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-diff-"));
  const baseTree = path.join(scratch, "base");
  let status = 0;
  let problem: string | undefined;
  try {
    const added = git(["worktree", "add", "--detach", "--quiet", baseTree, ref]);
    if (!added.ok) throw new ManifestDiffError(`cannot check out ${ref}: ${added.out}`);
    // The ref's own code, this tree's installed dependencies.
    symlinkSync(path.join(root, "node_modules"), path.join(baseTree, "node_modules"), "dir");
    render(baseTree, stack, path.join(scratch, "a"), ref);
    render(root, stack, path.join(scratch, "b"), "the working tree");
    status = reportRenderings(
      { before: path.join(scratch, "a"), after: path.join(scratch, "b") },
      { before: ref, after: "working-tree" },
      options,
    );
  } catch (error) {
    problem = error instanceof ManifestDiffError ? error.message : String(error);
  } finally {
    git(["worktree", "remove", "--force", baseTree]);
    rmSync(scratch, { recursive: true, force: true });
  }
  if (problem !== undefined) fail(problem);
  process.exitCode = status;
}

main();
