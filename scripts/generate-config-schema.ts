/**
 * Generates both front ends' schemas from the same TypeScript interfaces:
 *  - components/stack/config.schema.json from StackConfig (components/stack/config.ts);
 *  - charts/entryway/values.schema.json from ChartValues (components/stack/chart-values.ts), which
 *    is StackConfig's sections plus what only the chart has;
 *  - components/exec-gateway/settings.schema.json from ExecGatewaySettings, each property with the
 *    gateway's own default (gateway/src/config.ts): the component checks `settings` against it.
 * Tests keep both files in step (`npm run generate:schema`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import { createGenerator, type Config } from "ts-json-schema-generator";
import { parse } from "yaml";
import { CHART_CONDITIONS } from "../components/stack/chart-values";
import { defaultConfig } from "../gateway/src/config";

export const CONFIG_SOURCE = path.resolve(__dirname, "../components/stack/config.ts");
export const SCHEMA_FILE = path.resolve(__dirname, "../components/stack/config.schema.json");
export const CHART_VALUES_SOURCE = path.resolve(__dirname, "../components/stack/chart-values.ts");
export const VALUES_SCHEMA_FILE = path.resolve(__dirname, "../charts/entryway/values.schema.json");
export const SETTINGS_SOURCE = path.resolve(__dirname, "../components/exec-gateway/args.ts");
export const SETTINGS_SCHEMA_FILE = path.resolve(__dirname, "../components/exec-gateway/settings.schema.json");
const VALUES_FILE = path.resolve(__dirname, "../charts/entryway/values.yaml");

const common: Config = {
  tsconfig: path.resolve(__dirname, "../tsconfig.json"),
  additionalProperties: false,
  skipTypeCheck: true,
};

const print = (schema: unknown) => `${JSON.stringify(schema, null, 2)}\n`;

export function generateConfigSchema(): string {
  return print(createGenerator({ ...common, path: CONFIG_SOURCE, type: "StackConfig" }).createSchema("StackConfig"));
}

type Schema = { [key: string]: unknown; properties?: Record<string, Schema>; type?: unknown; description?: string };

/** Keywords that stay beside a property's accepted default (what the docs read, and `items`, which [] passes), the rest constrain. */
const KEPT = new Set(["type", "description", "title", "items"]);

/**
 * values.yaml must give every key a default and Helm cannot remove one, so a default such as ""
 * or 0 means "unset" in the chart where the stack config leaves the key out. Each default the
 * property's own constraints would refuse is accepted as is: first in its enum, or else
 * {type, anyOf: [{const: default}, {the constraints}]}.
 */
function acceptDefaults(schema: Schema, defaults: unknown, ajv: Ajv): void {
  if (!schema.properties || !defaults || typeof defaults !== "object" || Array.isArray(defaults)) return;
  for (const [key, value] of Object.entries(defaults as Record<string, unknown>)) {
    const property = schema.properties[key];
    if (!property) continue;
    // A map's own keys first; the map as a whole is then checked like any other default.
    if (value && typeof value === "object" && !Array.isArray(value)) acceptDefaults(property, value, ajv);
    if (ajv.validate(property, value)) {
      continue;
    } else if (Array.isArray(property.enum)) {
      schema.properties[key] = { ...property, enum: [value, ...property.enum] };
    } else {
      const kept = Object.fromEntries(Object.entries(property).filter(([k]) => KEPT.has(k)));
      const constraints = Object.fromEntries(Object.entries(property).filter(([k]) => !KEPT.has(k)));
      // A null default (e.g. "leave it out") widens the type itself.
      if (value === null && typeof kept.type === "string") kept.type = [kept.type, "null"];
      schema.properties[key] = { ...kept, anyOf: [{ const: value }, constraints] };
    }
  }
}

/**
 * A container's resources: in values.yaml a quantity may be a YAML number (`cpu: 1`), which Helm
 * renders as Kubernetes reads it; the stack config takes Kubernetes' string form only.
 */
function numericQuantities(schema: Schema): void {
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (key === "resources") {
      for (const side of Object.values(property.properties ?? {})) {
        const quantity = side.additionalProperties as Schema | undefined;
        if (quantity?.type === "string") side.additionalProperties = { ...quantity, type: ["string", "number"] };
      }
    }
    numericQuantities(property);
    if (property.items && typeof property.items === "object") numericQuantities(property.items as Schema);
  }
}

export function generateValuesSchema(): string {
  const generated = createGenerator({
    ...common,
    path: CHART_VALUES_SOURCE,
    type: "ChartValues",
    expose: "none",
    topRef: false,
  }).createSchema("ChartValues");
  // A tree of its own: the generator shares one object among every use of a type, and the steps below change one use.
  const schema = JSON.parse(JSON.stringify(generated)) as Schema;
  numericQuantities(schema);
  acceptDefaults(schema, parse(readFileSync(VALUES_FILE, "utf8")), new Ajv({ strict: false }));
  for (const [section, conditions] of Object.entries(CHART_CONDITIONS)) {
    schema.properties![section] = { ...schema.properties![section], allOf: conditions };
  }
  return print(schema);
}

/**
 * The exec gateway's settings as users set them (ExecGatewaySettings), each with the gateway's
 * default: the component's cross-field checks need the value a setting left out will have.
 */
export function generateSettingsSchema(): string {
  const schema = createGenerator({
    ...common,
    path: SETTINGS_SOURCE,
    type: "ExecGatewaySettings",
    expose: "none",
    topRef: false,
  }).createSchema("ExecGatewaySettings") as Schema;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(defaultConfig, key)) throw new Error(`ExecGatewaySettings.${key} is not a gateway setting`);
    property.default = defaultConfig[key as keyof typeof defaultConfig];
  }
  return print(schema);
}

if (require.main === module) {
  const files = [SCHEMA_FILE, VALUES_SCHEMA_FILE, SETTINGS_SCHEMA_FILE];
  writeFileSync(SCHEMA_FILE, generateConfigSchema());
  writeFileSync(VALUES_SCHEMA_FILE, generateValuesSchema());
  writeFileSync(SETTINGS_SCHEMA_FILE, generateSettingsSchema());
  console.log(`wrote ${files.map((file) => path.relative(process.cwd(), file)).join(", ")}`);
}
