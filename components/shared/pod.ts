/**
 * Where a workload's pods run and what they carry besides what the component sets: the options a
 * platform team sets on every workload (Istio's gateway chart and bitnami's charts take the same
 * keys). The chart's `entryway.podMetadata` and `entryway.podPlacement`
 * (charts/entryway/templates/_helpers.tpl) render the same fragment.
 */
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings } from "./image";

type PodSpec = k8s.types.input.core.v1.PodSpec;

/**
 * A Kubernetes object fragment taken as is (a Toleration, an Affinity, a NetworkPolicyPeer...).
 * `any`, not `unknown`: Pulumi's component analyzer maps only `any` to the schema's
 * `pulumi.json#/Any` and refuses `unknown` (pulumi/pulumi sdk/nodejs/provider/experimental/analyzer.ts,
 * analyzeType), so SDKs in other languages take a free-form map here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KubernetesFields = Record<string, any>;

/**
 * A TopologySpreadConstraint, taken as is but for the keys Kubernetes requires.
 * @required ["maxSkew", "topologyKey", "whenUnsatisfiable"]
 */
export type TopologySpreadConstraint = KubernetesFields;

/** A container's resources (Kubernetes quantities, e.g. {cpu: "500m", memory: "1Gi"}). */
export interface ContainerResources {
  /** Requests, e.g. {cpu: "500m", memory: "1Gi"}. */
  requests?: Record<string, string>;
  /** Limits, e.g. {memory: "2Gi"}. */
  limits?: Record<string, string>;
}

/** A workload's pod placement and metadata. Field shapes are the Kubernetes PodSpec's. */
export interface PodSettings {
  /** Node labels the pods must run on (PodSpec nodeSelector). */
  nodeSelector?: Record<string, string>;
  /** Taints the pods tolerate (PodSpec tolerations). */
  tolerations?: KubernetesFields[];
  /** Node and pod (anti-)affinity (PodSpec affinity). */
  affinity?: KubernetesFields;
  /** Replaces the workload's own spread constraints, if it has any (PodSpec topologySpreadConstraints). */
  topologySpreadConstraints?: TopologySpreadConstraint[];
  /** More annotations on the pods (the component's own win on a clash). */
  podAnnotations?: Record<string, string>;
  /** More labels on the pods; never over a label the component sets, so selectors stay intact. */
  podLabels?: Record<string, string>;
  /**
   * The pods' PriorityClass.
   * @pattern ^([a-z0-9]([-.a-z0-9]*[a-z0-9])?)?$
   */
  priorityClassName?: string;
}

const present = <T>(value: T | undefined): value is T =>
  value !== undefined &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === "object" && value !== null && Object.keys(value).length === 0) &&
  value !== "";

/** A pod template's metadata: the component's labels and annotations over the settings' own. @internal */
export function podMetadata(
  labels: Record<string, string>,
  settings: PodSettings | undefined,
  annotations: pulumi.Input<Record<string, string>> = {},
): { labels: Record<string, string>; annotations?: pulumi.Input<Record<string, string>> } {
  const merged = (own: Record<string, string>) => ({ ...settings?.podAnnotations, ...own });
  const metadata = { labels: { ...settings?.podLabels, ...labels } };
  // An annotation computed from an Output (a checksum of another stack's value) is merged once known.
  if (pulumi.Output.isInstance(annotations)) return { ...metadata, annotations: annotations.apply(merged) };
  const plain = merged(annotations as Record<string, string>);
  return present(plain) ? { ...metadata, annotations: plain } : metadata;
}

/** The PodSpec fields for placement and image pulls; `spread` is the workload's own spread, replaced by the settings'. @internal */
export function podPlacement(
  settings: PodSettings | undefined,
  global: GlobalSettings | undefined,
  spread?: PodSpec["topologySpreadConstraints"],
): Partial<PodSpec> {
  const fields: Partial<PodSpec> = {
    imagePullSecrets: global?.imagePullSecrets?.map((name) => ({ name })),
    nodeSelector: settings?.nodeSelector,
    tolerations: settings?.tolerations as PodSpec["tolerations"],
    affinity: settings?.affinity as PodSpec["affinity"],
    topologySpreadConstraints: (present(settings?.topologySpreadConstraints)
      ? settings.topologySpreadConstraints
      : spread) as PodSpec["topologySpreadConstraints"],
    priorityClassName: settings?.priorityClassName,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => present(value)));
}

/**
 * An HTTP GET probe of `path` on `port` (a container port's name or number), with its timing
 * (periodSeconds, timeoutSeconds, failureThreshold...), in the order given. @internal
 */
export function httpGetProbe<Timing extends Omit<k8s.types.input.core.v1.Probe, "httpGet">>(
  path: string,
  port: string | number,
  timing: Timing,
): { httpGet: { path: string; port: string | number } } & Timing {
  return { httpGet: { path, port }, ...timing };
}
