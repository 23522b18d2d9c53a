/**
 * Image references, as bitnami's common helpers build them (bitnami/charts
 * bitnami/common/templates/_images.tpl, common.images.image): `<registry>/<repository>:<tag>`, or
 * `@<digest>` in place of the tag when a digest is given, and a global registry (a mirror) in place
 * of every image's own. The chart's `entryway.image` (charts/entryway/templates/_helpers.tpl) does
 * the same, so both front ends render equal references.
 */
import type { ValueOf } from "./enum";

/** One image, in the chart's layout (`image: {registry, repository, tag, digest}`). */
export interface ImageSettings {
  /**
   * The registry host, e.g. ghcr.io ("" = none: the repository is a full name).
   * @pattern ^([A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*)?$
   */
  registry?: string;
  /**
   * The repository within the registry, e.g. entryway/exec-gateway.
   * @pattern ^([a-z0-9]+([._-]+[a-z0-9]+)*(/[a-z0-9]+([._-]+[a-z0-9]+)*)*)?$
   */
  repository?: string;
  /**
   * The tag.
   * @pattern ^([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$
   */
  tag?: string;
  /**
   * A digest, which wins over the tag (the reference becomes repository@digest).
   * @pattern ^(sha256:[a-f0-9]{64})?$
   */
  digest?: string;
}

/**
 * When the kubelet pulls an image. An `as const` object with a type of the same name: TypeScript
 * takes the plain strings, Pulumi's component analyzer reads it as an enum (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, extractEnumMembers).
 */
export const ImagePullPolicy = { Always: "Always", IfNotPresent: "IfNotPresent", Never: "Never" } as const;
export type ImagePullPolicy = ValueOf<typeof ImagePullPolicy>;

/**
 * A Secret's name (DNS-1123 subdomain).
 * @pattern ^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$
 */
export type SecretName = string;

/** What applies to every image and pod (the chart's `global`). */
export interface GlobalSettings {
  /**
   * A registry (a mirror) that replaces every image's own registry.
   * @pattern ^([A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*)?$
   */
  imageRegistry?: string;
  /**
   * Names of Secrets (kubernetes.io/dockerconfigjson) in each pod's namespace, used to pull every image.
   * @uniqueItems true
   */
  imagePullSecrets?: SecretName[];
}

/** The reference of an image: its settings over the defaults, the global registry over both. @internal */
export function imageReference(
  defaults: ImageSettings,
  image: ImageSettings | undefined,
  global: GlobalSettings | undefined,
): string {
  const registry = global?.imageRegistry || (image?.registry ?? defaults.registry);
  const repository = image?.repository || defaults.repository;
  if (!repository) throw new Error("an image needs a repository");
  const name = registry ? `${registry}/${repository}` : repository;
  const digest = image?.digest || defaults.digest;
  return digest ? `${name}@${digest}` : `${name}:${image?.tag || defaults.tag}`;
}
