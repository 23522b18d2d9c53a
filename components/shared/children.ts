// What a component's child objects share: their labels and pod selector, each object's metadata and
// the options every child is made with. One place, so that each component's children wait alike.
import * as pulumi from "@pulumi/pulumi";
import { selectorLabels, standardLabels, type LabelIdentity } from "./labels";

/** @internal */
export interface ChildObjects {
  readonly selector: Record<string, string>;
  readonly labels: Record<string, string>;
  /** An object's metadata, in the component's namespace unless another is given. */
  readonly meta: (
    objName: string,
    namespace?: pulumi.Input<string>,
  ) => { name: string; namespace: pulumi.Input<string>; labels: Record<string, string> };
  /** The options of every child: `parent` and the component's own dependsOn. */
  readonly child: pulumi.CustomResourceOptions;
}

/** @internal */
export function childObjects(
  identity: LabelIdentity,
  extraLabels: Record<string, string> | undefined,
  namespace: string,
  parent: pulumi.Resource,
  opts: pulumi.ComponentResourceOptions | undefined,
): ChildObjects {
  const labels = standardLabels(identity, extraLabels);
  return {
    selector: selectorLabels(identity),
    labels,
    meta: (objName, objNamespace = namespace) => ({ name: objName, namespace: objNamespace, labels }),
    // Children wait for what the component waits for (e.g. the Stack's namespace).
    child: { parent, ...(opts?.dependsOn ? { dependsOn: opts.dependsOn } : {}) },
  };
}

/** A child's options that also wait for `extra` (after the component's own dependsOn, if any). @internal */
export function withDependencies(
  opts: pulumi.CustomResourceOptions,
  extra: pulumi.Resource[],
): pulumi.CustomResourceOptions {
  if (extra.length === 0) return opts;
  const own = opts.dependsOn;
  if (own === undefined) return { ...opts, dependsOn: extra };
  return {
    ...opts,
    dependsOn: pulumi.output(own).apply((resolved) => [...(Array.isArray(resolved) ? resolved : [resolved]), ...extra]),
  };
}
