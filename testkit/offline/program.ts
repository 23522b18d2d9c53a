import path from "node:path";

/**
 * The stack program: index.ts of the directory the renderer runs in. scripts/render.mjs replaces
 * this module when it compiles the renderer, with an import of that same file bundled in.
 */
export function loadProgram(): Promise<Record<string, unknown>> {
  return import(path.join(process.cwd(), "index.ts")) as Promise<Record<string, unknown>>;
}
