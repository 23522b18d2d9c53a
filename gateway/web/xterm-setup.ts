// What every page with an xterm.js terminal shares: <style> elements that carry the page's CSP
// nonce, the terminal's look, Unicode 11 widths, and the WebGL renderer with its DOM fallback.
import { Unicode11Addon } from "@xterm/addon-unicode11";
import { WebglAddon } from "@xterm/addon-webgl";
import { Terminal, type ITerminalOptions } from "@xterm/xterm";

/** xterm.js's DOM renderer adds <style> elements; the CSP admits them only with this page's nonce. */
export function styleElementsWithNonce(): void {
  const styleNonce = document.querySelector<HTMLMetaElement>('meta[name="entryway-style-nonce"]')?.content ?? "";
  const createElement = document.createElement.bind(document);
  document.createElement = ((tagName: string, options?: ElementCreationOptions) => {
    const element = createElement(tagName, options);
    if (element instanceof HTMLStyleElement && styleNonce) element.nonce = styleNonce;
    return element;
  }) as typeof document.createElement;
}

/** A terminal in `parent`, painted by WebGL where it can be; `renderer` says which renderer paints. */
export function openTerminal(
  parent: HTMLElement,
  options: ITerminalOptions = {},
): { term: Terminal; renderer: () => "webgl" | "dom" } {
  const term = new Terminal({
    allowProposedApi: true, // unicode.activeVersion
    fontSize: 14,
    fontFamily:
      '"DejaVu Sans Mono", "Noto Sans Mono CJK SC", "Noto Sans Mono", Menlo, Consolas, monospace, "Noto Color Emoji", "Apple Color Emoji", "Segoe UI Emoji"',
    scrollback: 5000,
    theme: { background: "#1e1e1e" },
    ...options,
  });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = "11"; // emoji and CJK take two cells, as in the container's terminal
  term.open(parent);
  return { term, renderer: paintWithWebgl(term) };
}

/**
 * The WebGL renderer paints every cell (24-bit colours, the selection, underlines, links, the cursor)
 * on a canvas, so it needs no inline style and the CSP can forbid them. Renderer addons load after
 * open(), and disposing the addon gives the terminal back to xterm.js's DOM renderer
 * (xtermjs/xterm.js addons/addon-webgl/README.md and src/WebglAddon.ts): that is the fallback where
 * WebGL2 is missing or its context is lost for good; web/build.ts keeps it within the CSP too.
 */
function paintWithWebgl(term: Terminal): () => "webgl" | "dom" {
  let renderer: "webgl" | "dom" = "dom";
  const webgl = new WebglAddon();
  try {
    term.loadAddon(webgl);
  } catch {
    webgl.dispose(); // no WebGL2 here: the DOM renderer stays
    return () => renderer;
  }
  renderer = "webgl";
  webgl.onContextLoss(() => {
    webgl.dispose();
    renderer = "dom";
  });
  return () => renderer;
}
