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
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).some((k) => k.startsWith("fn::"))
  );
}

function checkObject(
  schema: PackageSchema,
  properties: Record<string, any>,
  required: readonly string[],
  value: unknown,
  path: string,
): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [`${path}: expected an object, got ${JSON.stringify(value)}`];
  const problems = required
    .filter((name) => !(name in value))
    .map((name) => `${path}: required property "${name}" is missing`);
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
      return allowed.includes(value)
        ? []
        : [`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(allowed)}`];
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
      return Array.isArray(value)
        ? value.flatMap((item, i) => checkValue(schema, spec.items ?? {}, item, `${path}[${i}]`))
        : [`${path}: expected a list, got ${JSON.stringify(value)}`];
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value))
        return [`${path}: expected a map, got ${JSON.stringify(value)}`];
      return Object.entries(value).flatMap(([k, v]) =>
        checkValue(schema, spec.additionalProperties ?? {}, v, `${path}.${k}`),
      );
    default:
      return [];
  }
}

/** What is wrong with a resource of `type` given `properties`; empty when the schema accepts it. */
export function checkResource(schema: PackageSchema, type: string, properties: Record<string, unknown>): string[] {
  const resource = schema.resources?.[type];
  if (!resource)
    return [
      `${type}: not a resource of package ${schema.name} (known: ${Object.keys(schema.resources ?? {})
        .sort()
        .join(", ")})`,
    ];
  return checkObject(schema, resource.inputProperties ?? {}, resource.requiredInputs ?? [], properties, type);
}

/** snake_case → camelCase, as Pulumi's Python SDK generator maps property names (the schema's names are camelCase). */
export function pythonNameToSchema(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A Python value with its dict keys mapped to the schema's names, recursively. */
export function pythonValueToSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pythonValueToSchema);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [pythonNameToSchema(k), pythonValueToSchema(v)]));
  return value;
}

/** `${resource.property}` references in a value: [resource, first property] pairs. */
function references(value: unknown): [string, string][] {
  if (typeof value === "string")
    return [...value.matchAll(/\$\{([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)/g)].map((m) => [m[1], m[2]]);
  if (Array.isArray(value)) return value.flatMap(references);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(references);
  return [];
}

function checkOutputReference(
  schema: PackageSchema,
  types: Map<string, string>,
  resource: string,
  property: string,
  where: string,
): string[] {
  const type = types.get(resource);
  if (type === undefined) return [];
  const outputs = schema.resources?.[type]?.properties ?? {};
  return property in outputs
    ? []
    : [
        `${where}: ${resource} (${type}) has no output "${property}" (outputs: ${Object.keys(outputs).sort().join(", ")})`,
      ];
}

/**
 * What is wrong with a Pulumi YAML program's use of the package: each resource of the package's
 * types checked by checkResource, and each `${resource.output}` naming an output of that resource.
 * Resources of other packages are left to their own schemas.
 */
export function checkYamlProgram(
  schema: PackageSchema,
  program: {
    resources?: Record<string, { type: string; properties?: Record<string, unknown> }>;
    outputs?: Record<string, unknown>;
  },
): string[] {
  const ours = Object.entries(program.resources ?? {}).filter(([, r]) => r.type.startsWith(`${schema.name}:`));
  const types = new Map(ours.map(([name, r]) => [name, r.type]));
  return [
    ...ours.flatMap(([name, r]) =>
      checkResource(schema, r.type, r.properties ?? {}).map((p) => `resources.${name}: ${p}`),
    ),
    ...ours.flatMap(([name, r]) =>
      references(r.properties ?? {}).flatMap(([res, prop]) =>
        checkOutputReference(schema, types, res, prop, `resources.${name}`),
      ),
    ),
    ...references(program.outputs ?? {}).flatMap(([res, prop]) =>
      checkOutputReference(schema, types, res, prop, "outputs"),
    ),
  ];
}

/** A component made in a Python program (examples/python), as test/provider/python-calls.py reports it. */
export interface PythonComponentCall {
  /** The variable it is assigned to. */
  variable: string;
  /** The SDK class (`pulumi_entryway.<Class>`). */
  className: string;
  line: number;
  /** Keyword arguments: literals as values, anything else as "${python:<source>}". */
  keywords: Record<string, unknown>;
}

/**
 * What is wrong with a Python program's use of the package's generated SDK: every class is one
 * of the package's components, every keyword (snake_case) one of its inputs, literal values of
 * the input's type, the required inputs given, and every `component.attribute` read an output.
 */
export function checkPythonProgram(
  schema: PackageSchema,
  calls: readonly PythonComponentCall[],
  attributeReads: readonly [string, string][],
): string[] {
  const types = new Map(calls.map((c) => [c.variable, `${schema.name}:index:${c.className}`]));
  return [
    ...calls.flatMap((c) => {
      const properties = Object.fromEntries(
        Object.entries(c.keywords).map(([k, v]) => [pythonNameToSchema(k), pythonValueToSchema(v)]),
      );
      return checkResource(schema, `${schema.name}:index:${c.className}`, properties).map(
        (p) => `line ${c.line}: ${p}`,
      );
    }),
    ...attributeReads.flatMap(([variable, attribute]) =>
      checkOutputReference(schema, types, variable, pythonNameToSchema(attribute), "python"),
    ),
  ];
}
