/**
 * Generates schema.json: the Pulumi package schema of the components, as Pulumi itself infers it
 * when a platform repo runs `pulumi package add` on this repository (PulumiPlugin.yaml). The
 * schema comes from the same ComponentProvider the nodejs plugin host starts
 * (@pulumi/pulumi/provider/experimental; pulumi/pulumi sdk/nodejs/cmd/run-plugin/run.ts finds the
 * components among the package's exports with getPulumiComponents and serves them with
 * componentProviderHost), so the checked-in file is what GetSchema answers, pretty-printed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ComponentProvider, getPulumiComponents } from "@pulumi/pulumi/provider/experimental";
import * as components from "../components";

export const REPO_ROOT = path.resolve(__dirname, "..");
export const PACKAGE_SCHEMA_FILE = path.join(REPO_ROOT, "schema.json");

/**
 * The provider's name: run-plugin takes it from package.json's name, without a scope (which
 * becomes the namespace) and with anything but letters, digits, `-` and `_` replaced by `-`.
 */
export function providerName(): string {
  const { name } = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { name: string };
  return name.replace(/^@[^/]+\//, "").replace(/[^-a-zA-Z0-9_]/g, "-");
}

/** The package schema Pulumi's analyzer infers from the components' sources, as formatted JSON. */
export async function generatePackageSchema(): Promise<string> {
  const provider = new ComponentProvider({
    name: providerName(),
    dirname: REPO_ROOT,
    components: getPulumiComponents(components),
  });
  return `${JSON.stringify(JSON.parse(await provider.getSchema()), null, 2)}\n`;
}

if (require.main === module) {
  void generatePackageSchema().then((schema) => {
    writeFileSync(PACKAGE_SCHEMA_FILE, schema);
    console.log(`wrote ${path.relative(process.cwd(), PACKAGE_SCHEMA_FILE)}`);
  });
}
