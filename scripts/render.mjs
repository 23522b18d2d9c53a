#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=25
/**
 * npm run render -- [stack] [--out DIR]: runs scripts/render.ts (see there) compiled, with plain
 * Node in this one process. esbuild (the one tsx ships) bundles it with the stack program (index.ts
 * of the working directory) and everything they import from this repository into one CommonJS
 * file, on every run (a fraction of a second; nothing cached, so nothing stale); npm packages stay
 * outside it, required from node_modules as tsx would. Against `tsx scripts/render.ts`, which
 * renders the same files, that leaves out tsx's loader thread, its per-file transforms and the
 * source maps it turns on (for @pulumi/pulumi's modules too).
 *
 * The two V8 flags above bound the heap of a large render (docs/testing.md, Memory at 1,000
 * workspaces): a young generation of 16 MiB semi-spaces (Node's default sizes it from the memory
 * limit: 64 MiB here, https://nodejs.org/api/cli.html#--max-semi-space-sizesize-in-mib), and a
 * full collection whenever the old generation has grown by 25 % since the last one (V8 lets it
 * grow up to 4 times).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";

const root = path.resolve(import.meta.dirname, "..");
const renderer = path.join(root, "scripts/render.ts");
const programModule = path.join(root, "testkit/offline/program.ts");
const program = path.join(process.cwd(), "index.ts");
const requireHere = createRequire(import.meta.url);
const esbuild = createRequire(requireHere.resolve("tsx/package.json"))("esbuild");

let bundle;
try {
  const result = await esbuild.build({
    entryPoints: [renderer],
    bundle: true,
    platform: "node",
    format: "cjs",
    packages: "external",
    // Function and class names as tsx leaves them (a bundle renames clashing ones).
    keepNames: true,
    write: false,
    logLevel: "silent",
    // The only import.meta in the renderer resolves packages from its own file; this file, in the
    // same tree, resolves them alike.
    define: { "import.meta.url": "importMetaUrl" },
    banner: { js: 'const importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [
      {
        name: "stack-program",
        setup(build) {
          build.onLoad({ filter: /[\\/]program\.ts$/ }, (args) =>
            args.path === programModule
              ? {
                  contents: `export const loadProgram = () => import(${JSON.stringify(program)});`,
                  loader: "ts",
                  resolveDir: root,
                }
              : undefined,
          );
        },
      },
    ],
  });
  bundle = result.outputFiles[0].text;
} catch (error) {
  const first = error.errors?.[0];
  const where = first?.location
    ? `${path.relative(process.cwd(), first.location.file) || first.location.file}:${first.location.line}: `
    : "";
  process.stderr.write(
    `render: cannot compile the renderer and stack program: ${where}${first?.text ?? error.message}\n`,
  );
  process.exit(1);
} finally {
  await esbuild.stop();
}

// Beside node_modules, so that the bundle's require()s find the same packages; removed once loaded.
const cache = path.join(root, "node_modules/.cache/entryway-render");
const file = path.join(cache, `render-${process.pid}.cjs`);
mkdirSync(cache, { recursive: true });
writeFileSync(file, bundle);
try {
  requireHere(file);
} finally {
  rmSync(file, { force: true });
}
