/**
 * Validates Kubernetes, Istio and prometheus-operator objects against the upstream schemas shipped
 * in kubernetes-models, @kubernetes-models/istio and @kubernetes-models/prometheus-operator, and
 * rejects unknown fields, which those schemas accept.
 *
 * Unknown fields are found by probing the schema itself: a known field set to a value no
 * schema type accepts (a function) makes validation fail; an unknown one does not. Objects that
 * are maps (labels, data) fail for any key, so their keys are all accepted. Paths that carry
 * opaque payloads are listed in OPAQUE_PATHS and checked elsewhere (Envoy payloads: envoy.ts).
 */
import type { K8sObject } from "../../policies/rules/helpers";

interface ValidationErrorLike {
  errors?: { instancePath: string; message?: string }[];
  message: string;
}
interface ModelInstance {
  validate(): void;
}
type ModelClass = new (data: unknown) => ModelInstance;

/** A rendered Kubernetes object: the policy rules' K8sObject, with its apiVersion always set. */
export type ObjectLike = K8sObject & { apiVersion: string };

const OPAQUE_PATHS: Record<string, RegExp[]> = {
  EnvoyFilter: [/^spec\/configPatches\/\d+\/patch\/value$/],
};

const modelCache = new Map<string, Promise<ModelClass>>();

async function loadModel(apiVersion: string, kind: string): Promise<ModelClass> {
  const key = `${apiVersion}/${kind}`;
  let model = modelCache.get(key);
  if (!model) {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    const modulePath = group.endsWith(".istio.io")
      ? `@kubernetes-models/istio/${group}/${version}/${kind}`
      : group === "monitoring.coreos.com"
        ? `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`
        : `kubernetes-models/${group ? `${group}/` : ""}${version}/${kind}`;
    model = import(modulePath).then(
      (mod: Record<string, ModelClass>) => {
        const cls = mod[kind];
        if (!cls) throw new Error(`no model ${kind} in ${modulePath}`);
        return cls;
      },
      () => {
        throw new Error(`no upstream schema for apiVersion ${apiVersion} kind ${kind}`);
      },
    );
    modelCache.set(key, model);
  }
  return model;
}

function schemaErrors(model: ModelClass, object: unknown): string[] {
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    const e = error as ValidationErrorLike;
    return e.errors?.map((err) => `${err.instancePath || "/"} ${err.message ?? "is invalid"}`) ?? [e.message];
  }
}

const POISON = () => undefined;

function withValueAt(root: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]] = value;
  return copy;
}

function unknownFields(model: ModelClass, root: unknown, kind: string): string[] {
  const opaque = OPAQUE_PATHS[kind] ?? [];
  const found: string[] = [];
  const rejects = (path: string[], value: unknown) => schemaErrors(model, withValueAt(root, path, value)).length > 0;

  const visit = (node: unknown, path: string[]) => {
    if (opaque.some((re) => re.test(path.join("/")))) return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, [...path, String(i)]));
      return;
    }
    if (typeof node !== "object" || node === null) return;
    // A map accepts keys of any name but checks their values: a made-up key gets rejected.
    const isMap = rejects([...path, "entryway-probe-key"], POISON);
    for (const [key, value] of Object.entries(node)) {
      const childPath = [...path, key];
      if (!isMap && !rejects(childPath, POISON)) {
        found.push(`/${childPath.join("/")} is not a field of ${kind}`);
        continue;
      }
      visit(value, childPath);
    }
  };
  visit(root, []);
  return found;
}

/** All problems with one object: schema errors, unknown fields, a missing name. */
export async function validateObject(object: ObjectLike): Promise<string[]> {
  const label = `${object.kind ?? "?"}/${object.metadata?.name ?? "?"}`;
  if (typeof object.apiVersion !== "string" || typeof object.kind !== "string") {
    return [`${label}: apiVersion and kind are required`];
  }
  const model = await loadModel(object.apiVersion, object.kind);
  const errors = schemaErrors(model, object);
  if (errors.length === 0) errors.push(...unknownFields(model, object, object.kind));
  if (!object.metadata?.name) errors.push("/metadata/name is required");
  return errors.map((error) => `${label}: ${error}`);
}

/** Validates every object; throws one error listing every problem found. */
export async function assertValidObjects(objects: readonly ObjectLike[]): Promise<void> {
  const problems = (await Promise.all(objects.map(validateObject))).flat();
  if (problems.length > 0) {
    throw new Error(`invalid manifests:\n  ${problems.join("\n  ")}`);
  }
}
