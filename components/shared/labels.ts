/**
 * The standard app.kubernetes.io labels. Selector labels are the subset that never changes
 * over an object's life (a Deployment's selector is immutable), so versions and managed-by
 * stay out of them.
 * @internal
 */
export const PART_OF = "entryway";

/** @internal */
export interface LabelIdentity {
  /** The application, e.g. "exec-gateway", "ssh-workspace". */
  readonly name: string;
  /** This instance of it, e.g. the component's resource name. */
  readonly instance: string;
  /** The role inside the application, e.g. "server", "database", "rte". */
  readonly component?: string;
}

/** @internal */
export function selectorLabels(identity: LabelIdentity): Record<string, string> {
  return {
    "app.kubernetes.io/name": identity.name,
    "app.kubernetes.io/instance": identity.instance,
    ...(identity.component ? { "app.kubernetes.io/component": identity.component } : {}),
  };
}

/** @internal */
export function standardLabels(
  identity: LabelIdentity & { readonly version?: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...extra,
    ...selectorLabels(identity),
    "app.kubernetes.io/part-of": PART_OF,
    "app.kubernetes.io/managed-by": "pulumi",
    ...(identity.version ? { "app.kubernetes.io/version": sanitiseLabelValue(identity.version) } : {}),
  };
}

/** Label values: at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. @internal */
export function sanitiseLabelValue(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}
