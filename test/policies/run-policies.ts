/** Runs the policy pack's CrossGuard callbacks as the engine would, without the Pulumi CLI. */
import type {
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { entrywayPolicies, type EntrywayPolicyConfig } from "../../policies/rules";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A resource as a policy sees it: its type token and its inputs. */
export interface Resource {
  type: string;
  props: Obj;
}

const resourcePolicies = entrywayPolicies.filter((p): p is ResourceValidationPolicy => "validateResource" in p);
const stackPolicies = entrywayPolicies.filter((p): p is StackValidationPolicy => "validateStack" in p);

function notApplicable(reason?: string): never {
  throw new Error(`notApplicable: ${reason}`);
}

/** Runs one resource policy on one resource as the engine would; returns the violations. */
export async function runResourcePolicy(
  policy: ResourceValidationPolicy,
  resource: Resource,
  config: EntrywayPolicyConfig = {},
): Promise<string[]> {
  const violations: string[] = [];
  const args = {
    type: resource.type,
    props: resource.props,
    urn: `urn:pulumi:test::entryway::${resource.type}::${resource.props.metadata?.name ?? "x"}`,
    name: resource.props.metadata?.name ?? "x",
    opts: { protect: false, ignoreChanges: [], aliases: [], additionalSecretOutputs: [] },
    stackTags: new Map<string, string>(),
    isType: () => false,
    asType: () => undefined,
    getConfig: <T extends object>() => config as T,
    notApplicable,
  } as unknown as ResourceValidationArgs;
  const validations = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
  for (const validate of validations) {
    if (!validate) throw new Error(`${policy.name} has no validateResource callback`);
    await validate(args, (message: string) => violations.push(message));
  }
  return violations;
}

export async function runStackPolicy(policy: StackValidationPolicy, resources: Resource[]): Promise<string[]> {
  const violations: string[] = [];
  const args = {
    resources: resources.map((r) => ({
      ...r,
      urn: `urn:${r.type}`,
      name: r.props.metadata?.name ?? "x",
      dependencies: [],
      propertyDependencies: {},
    })),
    getConfig: <T extends object>() => ({}) as T,
    notApplicable,
  } as unknown as StackValidationArgs;
  await policy.validateStack(args, (message: string) => violations.push(message));
  return violations;
}

export async function allViolations(resources: Resource[], config: EntrywayPolicyConfig = {}): Promise<string[]> {
  const found: string[] = [];
  for (const resource of resources) {
    for (const policy of resourcePolicies) found.push(...(await runResourcePolicy(policy, resource, config)));
  }
  for (const policy of stackPolicies) found.push(...(await runStackPolicy(policy, resources)));
  return found;
}

/** A Kubernetes object as the resource the Pulumi SDK registers for it. */
export function asResource(object: Obj): Resource {
  const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["core", object.apiVersion];
  return { type: `kubernetes:${group}/${version}:${object.kind}`, props: object };
}
