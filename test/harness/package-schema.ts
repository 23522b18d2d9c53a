/**
 * Checks resource properties against a Pulumi package schema the way a consumer's SDK or Pulumi
 * YAML binds them: the type must be one of the schema's resources, every `requiredInputs` entry
 * given, every property one of `inputProperties`, and each value of the property's type
 * (string, integer, number, boolean, array `items`, map `additionalProperties`, a `#/types/...`
 * object type with its own properties and required list, or an enum's values). Schema format:
 * https://www.pulumi.com/docs/iac/guides/building-extending/packages/schema/ (pulumi/pulumi
 * pkg/codegen/schema/pulumi.json). References to other packages' types (e.g. Kubernetes) and
 * `pulumi.json#/Any` accept any value; a Pulumi YAML expression (`${...}`, `fn::...`) is not
 * evaluated, so it is accepted where any value could be.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
export type PackageSchema = Record<string, any>;

function isExpression(value: unknown): boolean {
  if (typeof value === "string") return /\$\{[^}]+\}/.test(value);
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith("fn::"));
}

function checkObject(schema: PackageSchema, properties: Record<string, any>, required: readonly string[], value: unknown, path: string): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: expected an object, got ${JSON.stringify(value)}`];
  const problems = required.filter((name) => !(name in value)).map((name) => `${path}: required property "${name}" is missing`);
  for (const [name, inner] of Object.entries(value)) {
    const spec = properties[name];
    if (!spec) {
      problems.push(`${path}: unknown property "${name}" (known: ${Object.keys(properties).sort().join(", ")})`);
      continue;
    }
    problems.push(...checkValue(schema, spec, inner, `${path}.${name}`));
  }
  return problems;
}

function checkValue(schema: PackageSchema, spec: Record<string, any>, value: unknown, path: string): string[] {
  if (isExpression(value)) return [];
  if (spec.$ref !== undefined) {
    const local = /^#\/types\/(.+)$/.exec(spec.$ref);
    if (!local) return []; // another package's type or pulumi.json#/Any
    const type = schema.types?.[decodeURIComponent(local[1])];
    if (!type) return [`${path}: the schema has no type ${spec.$ref}`];
    if (type.enum) {
      const allowed = type.enum.map((e: { value: unknown }) => e.value);
      return allowed.includes(value) ? [] : [`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(allowed)}`];
    }
    return checkObject(schema, type.properties ?? {}, type.required ?? [], value, path);
  }
  switch (spec.type) {
    case "string":
      return typeof value === "string" ? [] : [`${path}: expected a string, got ${JSON.stringify(value)}`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${path}: expected a boolean, got ${JSON.stringify(value)}`];
    case "integer":
      return Number.isInteger(value) ? [] : [`${path}: expected an integer, got ${JSON.stringify(value)}`];
    case "number":
      return typeof value === "number" ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`];
    case "array":
      return Array.isArray(value) ? value.flatMap((item, i) => checkValue(schema, spec.items ?? {}, item, `${path}[${i}]`)) : [`${path}: expected a list, got ${JSON.stringify(value)}`];
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: expected a map, got ${JSON.stringify(value)}`];
      return Object.entries(value).flatMap(([k, v]) => checkValue(schema, spec.additionalProperties ?? {}, v, `${path}.${k}`));
    default:
      return [];
  }
}

/** What is wrong with a resource of `type` given `properties`; empty when the schema accepts it. */
export function checkResource(schema: PackageSchema, type: string, properties: Record<string, unknown>): string[] {
  const resource = schema.resources?.[type];
  if (!resource) return [`${type}: not a resource of package ${schema.name} (known: ${Object.keys(schema.resources ?? {}).sort().join(", ")})`];
  return checkObject(schema, resource.inputProperties ?? {}, resource.requiredInputs ?? [], properties, type);
}

/** snake_case → camelCase, as Pulumi's Python SDK generator maps property names (the schema's names are camelCase). */
export function pythonNameToSchema(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A Python value with its dict keys mapped to the schema's names, recursively. */
export function pythonValueToSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pythonValueToSchema);
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [pythonNameToSchema(k), pythonValueToSchema(v)]));
  return value;
}
