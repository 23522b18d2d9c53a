// Bundles the web terminal (web/main.ts and its CSS, xterm.js included) and the replay page
// (web/replay.ts) with esbuild into one folder the gateway serves (src/web-assets.ts): app.js,
// app.css, index.html, replay.js, replay.css, replay.html, favicon.svg. Nothing is fetched
// at run time. `npm run build:web -w gateway` writes gateway/dist/web/; tests build into a folder of their own.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_WEB_DIR = join(here, "..", "dist", "web");

/**
 * xterm.js's DOM renderer, the page's fallback when WebGL2 is missing or lost, gives 24-bit colours and
 * the selection's background with `element.setAttribute("style", …)` (`_addStyle` in xtermjs/xterm.js
 * src/browser/renderer/dom/DomRendererRowFactory.ts), which a CSP without 'unsafe-inline' for
 * style-src-attr blocks. Setting the same property through the CSSOM (`element.style.setProperty`) is
 * not an inline style attribute and no CSP blocks it (MDN, "CSP: style-src-attr", examples). This
 * rewrites that one method in the bundled xterm.js; the build fails if the method is not found as
 * expected (a new xterm.js), so the rewrite is checked again rather than silently dropped.
 */
const ADD_STYLE =
  /_addStyle\((\w+),(\w+)\)\{\1\.setAttribute\("style",`\$\{\1\.getAttribute\("style"\)\|\|""\}\$\{\2\};`\)\}/g;
export const domRendererStylesThroughCssom: Plugin = {
  name: "xterm-dom-renderer-cssom-styles",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]@xterm[\\/]xterm[\\/]lib[\\/]xterm\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const found = source.match(ADD_STYLE)?.length ?? 0;
      if (found !== 1)
        throw new Error(
          `${args.path}: expected xterm.js's DomRendererRowFactory._addStyle once, found it ${found} times; check the rewrite against this xterm.js version`,
        );
      const contents = source.replace(
        ADD_STYLE,
        (_, element: string, style: string) =>
          `_addStyle(${element},${style}){const colon=${style}.indexOf(":");${element}.style.setProperty(${style}.slice(0,colon),${style}.slice(colon+1))}`,
      );
      return { contents, loader: "js" };
    });
  },
};

export async function buildWebAssets(outDir: string = DEFAULT_WEB_DIR): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { app: join(here, "main.ts"), replay: join(here, "replay.ts") },
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    legalComments: "eof",
    outdir: outDir,
    logLevel: "warning",
    plugins: [domRendererStylesThroughCssom],
  });
  for (const file of ["index.html", "replay.html", "favicon.svg"]) copyFileSync(join(here, file), join(outDir, file));
  return outDir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = await buildWebAssets(process.argv[2] ?? DEFAULT_WEB_DIR);
  process.stdout.write(`web terminal built in ${out}\n`);
}
