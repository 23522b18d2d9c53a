/** Generates components/stack/config.schema.json from the StackConfig interface. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createGenerator } from "ts-json-schema-generator";

export const CONFIG_SOURCE = path.resolve(__dirname, "../components/stack/config.ts");
export const SCHEMA_FILE = path.resolve(__dirname, "../components/stack/config.schema.json");

export function generateConfigSchema(): string {
  const schema = createGenerator({
    path: CONFIG_SOURCE,
    tsconfig: path.resolve(__dirname, "../tsconfig.json"),
    type: "StackConfig",
    additionalProperties: false,
    skipTypeCheck: true,
  }).createSchema("StackConfig");
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(SCHEMA_FILE, generateConfigSchema());
  console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
}
