/**
 * Checks the Envoy payloads inside Istio EnvoyFilters field by field against Envoy's own
 * .proto definitions (shipped in @grpc/grpc-js-xds). Payloads are protobuf JSON: field names
 * in snake_case or lowerCamelCase, Any messages with "@type", Durations as "1.5s" strings.
 */
import { accessSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import protobuf from "protobufjs";
import type { ObjectLike } from "./validate";

const require = createRequire(import.meta.url);
const depsRoot = path.join(path.dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
const includeDirs = [
  ...["envoy-api", "googleapis", "protoc-gen-validate", "xds"].map((dir) => path.join(depsRoot, dir)),
  // google/protobuf/descriptor.proto and friends, which Envoy's options import.
  path.dirname(require.resolve("protobufjs/package.json")),
];

/** The Envoy message an EnvoyFilter patch value is, by the patch's applyTo. */
const PATCH_TYPES: Record<string, string> = {
  LISTENER: "envoy.config.listener.v3.Listener",
  FILTER_CHAIN: "envoy.config.listener.v3.FilterChain",
  NETWORK_FILTER: "envoy.config.listener.v3.Filter",
  HTTP_FILTER: "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter",
  ROUTE_CONFIGURATION: "envoy.config.route.v3.RouteConfiguration",
  VIRTUAL_HOST: "envoy.config.route.v3.VirtualHost",
  HTTP_ROUTE: "envoy.config.route.v3.Route",
  CLUSTER: "envoy.config.cluster.v3.Cluster",
};

/** Protos that hold every type an Any in our payloads may name. */
const ROOT_PROTOS = [
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
];

let rootPromise: Promise<protobuf.Root> | undefined;

function loadRoot(): Promise<protobuf.Root> {
  rootPromise ??= (async () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => {
      for (const dir of includeDirs) {
        const candidate = path.join(dir, target);
        try {
          accessSync(candidate);
          return candidate;
        } catch {
          // not in this include directory
        }
      }
      return target;
    };
    await root.load(ROOT_PROTOS, { keepCase: true });
    root.resolveAll();
    return root;
  })();
  return rootPromise;
}

const WELL_KNOWN_SCALARS: Record<string, (v: unknown) => boolean> = {
  "google.protobuf.Duration": (v) => typeof v === "string" && /^-?\d+(\.\d{1,9})?s$/.test(v),
  "google.protobuf.BoolValue": (v) => typeof v === "boolean",
  "google.protobuf.UInt32Value": (v) => Number.isInteger(v) && (v as number) >= 0,
  "google.protobuf.UInt64Value": (v) =>
    (Number.isInteger(v) && (v as number) >= 0) || (typeof v === "string" && /^\d+$/.test(v)),
  "google.protobuf.Int32Value": (v) => Number.isInteger(v),
  "google.protobuf.DoubleValue": (v) => typeof v === "number",
  "google.protobuf.StringValue": (v) => typeof v === "string",
  "google.protobuf.Struct": (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  "google.protobuf.Value": () => true,
};

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function checkScalar(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
    case "bytes":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "double":
    case "float":
      return typeof value === "number";
    case "int32":
    case "sint32":
    case "sfixed32":
      return Number.isInteger(value);
    case "uint32":
    case "fixed32":
      return Number.isInteger(value) && (value as number) >= 0;
    default: // 64-bit integers: numbers or decimal strings in protobuf JSON
      return Number.isInteger(value) || (typeof value === "string" && /^-?\d+$/.test(value));
  }
}

function checkMessage(root: protobuf.Root, type: protobuf.Type, value: unknown, at: string, errors: string[]): void {
  const fullName = type.fullName.replace(/^\./, "");
  const wellKnown = WELL_KNOWN_SCALARS[fullName];
  if (wellKnown) {
    if (!wellKnown(value)) errors.push(`${at}: not a valid ${fullName}`);
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    errors.push(`${at}: expected a ${fullName} object`);
    return;
  }
  const object = value as Record<string, unknown>;
  if (fullName === "google.protobuf.Any") {
    const url = object["@type"];
    if (typeof url !== "string" || !url.startsWith("type.googleapis.com/")) {
      errors.push(`${at}: an Any needs "@type": "type.googleapis.com/<message>"`);
      return;
    }
    const inner = root.lookupType(url.slice("type.googleapis.com/".length));
    const { "@type": _omit, ...rest } = object;
    checkMessage(root, inner, rest, at, errors);
    return;
  }
  const byName = new Map<string, protobuf.Field>();
  for (const field of type.fieldsArray) {
    byName.set(field.name, field);
    byName.set(camel(field.name), field);
  }
  const oneofsSet = new Map<string, string>();
  for (const [key, fieldValue] of Object.entries(object)) {
    const field = byName.get(key);
    const fieldAt = `${at}.${key}`;
    if (!field) {
      errors.push(`${fieldAt}: ${fullName} has no field "${key}"`);
      continue;
    }
    if (field.partOf) {
      const other = oneofsSet.get(field.partOf.name);
      if (other) errors.push(`${fieldAt}: oneof ${field.partOf.name} already set by "${other}"`);
      oneofsSet.set(field.partOf.name, key);
    }
    if (field.options?.deprecated) {
      errors.push(`${fieldAt}: deprecated in Envoy`);
    }
    if (field.map) {
      if (typeof fieldValue !== "object" || fieldValue === null) {
        errors.push(`${fieldAt}: expected a map`);
        continue;
      }
      for (const [k, v] of Object.entries(fieldValue)) checkValue(root, field, v, `${fieldAt}.${k}`, errors);
    } else if (field.repeated) {
      if (!Array.isArray(fieldValue)) {
        errors.push(`${fieldAt}: expected a list`);
        continue;
      }
      fieldValue.forEach((v, i) => checkValue(root, field, v, `${fieldAt}[${i}]`, errors));
    } else {
      checkValue(root, field, fieldValue, fieldAt, errors);
    }
  }
}

function checkValue(root: protobuf.Root, field: protobuf.Field, value: unknown, at: string, errors: string[]): void {
  const resolved = field.resolve().resolvedType;
  if (resolved instanceof protobuf.Enum) {
    if (
      !(typeof value === "string" && value in resolved.values) &&
      !(Number.isInteger(value) && Object.values(resolved.values).includes(value as number))
    ) {
      errors.push(`${at}: "${String(value)}" is not a value of ${resolved.name}`);
    }
  } else if (resolved instanceof protobuf.Type) {
    checkMessage(root, resolved, value, at, errors);
  } else if (!checkScalar(field.type, value)) {
    errors.push(`${at}: expected ${field.type}, got ${JSON.stringify(value)}`);
  }
}

/** Problems in the Envoy payloads of one EnvoyFilter (an empty list when it is sound). */
export async function checkEnvoyFilter(filter: ObjectLike): Promise<string[]> {
  const root = await loadRoot();
  const spec = filter.spec as { configPatches?: { applyTo?: string; patch?: { value?: unknown } }[] } | undefined;
  const errors: string[] = [];
  (spec?.configPatches ?? []).forEach((patch, i) => {
    const at = `EnvoyFilter/${filter.metadata?.name}.configPatches[${i}].patch.value`;
    const typeName = patch.applyTo ? PATCH_TYPES[patch.applyTo] : undefined;
    if (!typeName) {
      errors.push(`${at}: no Envoy type known for applyTo ${patch.applyTo}`);
      return;
    }
    if (patch.patch?.value !== undefined) {
      checkMessage(root, root.lookupType(typeName), patch.patch.value, at, errors);
    }
  });
  return errors;
}
