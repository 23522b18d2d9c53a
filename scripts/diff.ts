/**
 * npm run diff -- <git-ref> [stack]
 *
 * The review diff that needs no credentials: renders the stack (default: dev) at <git-ref> and
 * in the working tree, and prints the manifest-level difference between the two.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const root = process.cwd();

function fail(message: string): never {
  console.error(`diff: ${message}`);
  process.exit(1);
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
  if (!existsSync(source)) fail(`${label} has no offline renderer (scripts/render.ts)`);
  const [command, args] = existsSync(compiled)
    ? [compiled, [stack, "--out", outDir]]
    : [path.join(root, "node_modules", ".bin", "tsx"), ["scripts/render.ts", stack, "--out", outDir]];
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`;
  const result = spawnSync(command, args, { cwd: tree, encoding: "utf8", env: { ...process.env, PATH } });
  if (result.status !== 0) {
    fail(`rendering ${label} failed: ${(result.stderr || result.stdout).trim().split("\n").pop()}`);
  }
}

function main(): void {
  const [ref, stack = "dev", ...rest] = process.argv.slice(2);
  if (!ref || rest.length > 0 || ref.startsWith("-")) fail("usage: npm run diff -- <git-ref> [stack]");
  if (!git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).ok) {
    fail(`"${ref}" is not a commit in this repository`);
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-diff-"));
  const baseTree = path.join(scratch, "base");
  try {
    const added = git(["worktree", "add", "--detach", "--quiet", baseTree, ref]);
    if (!added.ok) fail(`cannot check out ${ref}: ${added.out}`);
    // The ref's own code, this tree's installed dependencies.
    symlinkSync(path.join(root, "node_modules"), path.join(baseTree, "node_modules"), "dir");
    render(baseTree, stack, path.join(scratch, "a"), ref);
    render(root, stack, path.join(scratch, "b"), "the working tree");
    const diff = spawnSync(
      "git",
      [
        "diff",
        "--no-index",
        "--no-prefix",
        `--src-prefix=${ref}/`,
        "--dst-prefix=working-tree/",
        "--color=auto",
        "a",
        "b",
      ],
      { cwd: scratch, stdio: "inherit" },
    );
    if (diff.status === 0) console.log(`no manifest changes in stack "${stack}" since ${ref}`);
    else if (diff.status !== 1) fail("git diff failed");
  } finally {
    git(["worktree", "remove", "--force", baseTree]);
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
