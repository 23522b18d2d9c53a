// Bundles the web terminal (web/main.ts and its CSS, xterm.js included) with esbuild into one folder
// the gateway serves (src/web-assets.ts): app.js, app.css, index.html. Nothing is fetched at run time.
// `npm run build:web -w gateway` writes gateway/dist/web/; tests build into a folder of their own.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_WEB_DIR = join(here, "..", "dist", "web");

export async function buildWebAssets(outDir: string = DEFAULT_WEB_DIR): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { app: join(here, "main.ts") },
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    legalComments: "eof",
    outdir: outDir,
    logLevel: "warning",
  });
  copyFileSync(join(here, "index.html"), join(outDir, "index.html"));
  return outDir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = await buildWebAssets(process.argv[2] ?? DEFAULT_WEB_DIR);
  process.stdout.write(`web terminal built in ${out}\n`);
}
