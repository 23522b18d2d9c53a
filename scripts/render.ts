/**
 * npm run render -- [stack] [--out DIR]
 *
 * Evaluates index.ts with the configuration in Pulumi.<stack>.yaml, with no Pulumi CLI and no
 * cluster, and writes the Kubernetes objects it would apply to rendered/<stack>/, one file per
 * object, secrets redacted; then prints where they went, the objects by kind and the stack outputs
 * (secrets redacted). The real preview is `pulumi preview --diff` (see docs/deploying.md).
 */
// First: it keeps @pulumi/pulumi, imported next, from loading the TypeScript compiler.
import "../testkit/offline/lazy-typescript";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { parse, stringify } from "yaml";
import { type Manifest, manifestFileName, REDACTED, toManifests } from "../testkit/offline/manifests";
import { loadProgram } from "../testkit/offline/program";
import { FAKE_RANDOM_PREFIX, installOfflineRuntime, runProgram } from "../testkit/offline/runtime";

const root = process.cwd();
const SECRET_CONFIG_PLACEHOLDER = "offline-secret-config-";

class RenderError extends Error {}

function fail(message: string): never {
  console.error(`render: ${message}`);
  process.exit(1);
}

function knownStacks(): string[] {
  return readdirSync(root)
    .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
    .filter((stack): stack is string => stack !== undefined)
    .sort();
}

/** The stack's config as the engine passes it: flat "project:key" → string, secure keys noted. */
function readStackConfig(stack: string, project: string): { config: Record<string, string>; secretKeys: string[] } {
  const file = path.join(root, `Pulumi.${stack}.yaml`);
  if (!existsSync(file)) {
    throw new RenderError(
      `unknown stack "${stack}": no Pulumi.${stack}.yaml (known stacks: ${knownStacks().join(", ") || "none"})`,
    );
  }
  let document: { config?: Record<string, unknown> } | null;
  try {
    document = parse(readFileSync(file, "utf8")) as { config?: Record<string, unknown> } | null;
  } catch (error) {
    throw new RenderError(`Pulumi.${stack}.yaml is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [rawKey, value] of Object.entries(document?.config ?? {})) {
    const key = rawKey.includes(":") ? rawKey : `${project}:${rawKey}`;
    if (typeof value === "object" && value !== null && "secure" in value) {
      // Encrypted values need the stack's secrets provider; offline they are placeholders.
      config[key] = `${SECRET_CONFIG_PLACEHOLDER}${key}`;
      secretKeys.push(key);
    } else {
      config[key] = typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  return { config, secretKeys };
}

async function resolveOutputs(exports: Record<string, unknown>): Promise<Record<string, unknown>> {
  const outputs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(exports)) {
    if (name === "default" || typeof value === "function") continue;
    const output: pulumi.Output<unknown> = pulumi.output(value);
    outputs[name] = (await pulumi.isSecret(output))
      ? REDACTED
      : await new Promise((resolve) => output.apply((v: unknown) => resolve(v)));
  }
  return outputs;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf("--out");
  const outArg = outIndex >= 0 ? args.splice(outIndex, 2)[1] : undefined;
  if (args.length > 1 || args.some((a) => a.startsWith("-"))) {
    throw new RenderError("usage: npm run render -- [stack] [--out DIR]");
  }
  const stack = args[0] ?? "dev";
  const project = (parse(readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { name: string }).name;
  const { config, secretKeys } = readStackConfig(stack, project);
  const outDir = path.resolve(root, outArg ?? path.join("rendered", stack));

  await installOfflineRuntime({
    project,
    stack,
    config,
    secretConfigKeys: secretKeys,
    stackTraces: false,
    oneShot: true,
  });
  let exports: Record<string, unknown> = {};
  const resources = await runProgram(async () => {
    exports = await loadProgram();
  });
  const manifests = toManifests(resources);
  const outputs = await resolveOutputs(exports);

  const files = new Map<string, string>();
  for (const manifest of manifests) {
    const file = manifestFileName(manifest);
    if (files.has(file)) throw new RenderError(`two objects would be written to ${file}`);
    // Two searches that walk every manifest find nothing here: aliases (recorded inputs are decoded
    // from each request, so no two nodes are one object) and %TAG directives (only default tags).
    files.set(file, stringify(manifest, { sortMapEntries: false, aliasDuplicateObjects: false, directives: false }));
  }
  files.set("_outputs.yaml", stringify(outputs));
  files.set(
    "_resources.txt",
    resources
      .map((r) => `${r.type} ${r.name}${r.parent ? `  (parent ${r.parent.split("::").pop()})` : ""}`)
      .join("\n") + "\n",
  );
  for (const [file, text] of files) {
    if (text.includes(FAKE_RANDOM_PREFIX) || text.includes(SECRET_CONFIG_PLACEHOLDER)) {
      throw new RenderError(`a secret value would be written to ${file}; refusing to write it`);
    }
  }
  // Thousands of files at a thousand workspaces, most of them unchanged when rendering again:
  // remove only what this render no longer makes, and rewrite only what changed.
  mkdirSync(outDir, { recursive: true });
  const existing = new Set(readdirSync(outDir));
  for (const file of existing) if (!files.has(file)) rmSync(path.join(outDir, file), { recursive: true, force: true });
  for (const [file, text] of files) {
    const target = path.join(outDir, file);
    if (!existing.has(file) || readFileSync(target, "utf8") !== text) writeFileSync(target, text);
  }
  console.log(summary(stack, path.relative(root, outDir) || ".", manifests, files.get("_outputs.yaml")!));
}

/** What a newcomer sees after a render: where the files are, what kinds of object, the outputs (already redacted). */
function summary(stack: string, outDir: string, manifests: Manifest[], outputsYaml: string): string {
  const byKind = new Map<string, number>();
  for (const { kind } of manifests) byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
  const kinds = [...byKind]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `  ${String(count).padStart(3)} ${kind}`);
  const indent = (text: string) =>
    text
      .trimEnd()
      .split("\n")
      .map((line) => `  ${line}`);
  return [
    `rendered ${manifests.length} objects of stack "${stack}" to ${outDir}`,
    "objects by kind:",
    ...kinds,
    `stack outputs (${outDir}/_outputs.yaml; secret values shown as ${REDACTED}):`,
    ...indent(outputsYaml),
  ].join("\n");
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n").filter(Boolean).join(" ").slice(0, 2000);
}

process.on("unhandledRejection", (error) => fail(oneLine(error)));
main().then(
  () => process.exit(0),
  (error: unknown) => fail(oneLine(error)),
);
