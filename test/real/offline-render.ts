/**
 * The offline renderer (`npm run render`: scripts/render.mjs, which compiles scripts/render.ts) run on a stack configuration that is
 * not a file of the repository, so its objects and outputs can be set beside what the real engine
 * and API server did with the same configuration.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import { run } from "../../testkit/harness/process";

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  readonly [key: string]: unknown;
}

export interface OfflineRendering {
  readonly objects: RenderedObject[];
  readonly outputs: Record<string, unknown>;
}

export async function renderOffline(stackName: string, config: Record<string, unknown>): Promise<OfflineRendering> {
  const tree = mkdtempSync(path.join(os.tmpdir(), "entryway-offline-"));
  try {
    writeFileSync(path.join(tree, "Pulumi.yaml"), readFileSync(path.join(repoRoot, "Pulumi.yaml")));
    writeFileSync(path.join(tree, `Pulumi.${stackName}.yaml`), stringify({ config }));
    // The repository's program, from a folder that holds this stack's configuration.
    writeFileSync(path.join(tree, "index.ts"), `export * from ${JSON.stringify(path.join(repoRoot, "index.ts"))};\n`);
    const out = path.join(tree, "rendered");
    // What `npm run render` runs (the compiled renderer), on this process's Node.
    const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`;
    const result = await run(path.join(repoRoot, "scripts", "render.mjs"), [stackName, "--out", out], {
      cwd: tree,
      env: { ...process.env, PATH },
    });
    if (result.status !== 0) throw new Error(`offline render of ${stackName} failed: ${result.stderr}${result.stdout}`);
    const files = readdirSync(out);
    return {
      objects: files
        .filter((file) => file.endsWith(".yaml") && !file.startsWith("_"))
        .map((file) => parse(readFileSync(path.join(out, file), "utf8")) as RenderedObject),
      outputs: parse(readFileSync(path.join(out, "_outputs.yaml"), "utf8")) as Record<string, unknown>,
    };
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

/** kind/namespace/name, the identity of an object on the API server. */
export function objectKey(object: { kind: string; metadata?: { name?: string; namespace?: string } }): string {
  return `${object.kind}/${object.metadata?.namespace ?? ""}/${object.metadata?.name}`;
}
