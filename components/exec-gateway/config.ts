/**
 * The exec gateway's section of the stack config (`entryway:stack.execGateway`): plain JSON,
 * the same shape as the chart's `execGateway` values minus `enabled` (the section's presence
 * deploys the gateway). The Stack turns it into ExecGatewayArgs.
 */
import type {
  ConfigMapKeyRef,
  ExecGatewayArgs,
  ExecGatewayAuthorizer,
  ExecGatewayAutoscalingArgs,
  ExecGatewayDebugContainersArgs,
  ExecGatewayExposureArgs,
  ExecGatewayOidcArgs,
  ExecGatewayRecordingsArgs,
  ExecGatewayRecordingsS3Args,
  ExecGatewaySettings,
} from "./index";
import type { ImageSettings } from "../shared/image";
import type { MonitoringArgs } from "../shared/monitoring";
import type { StackContext } from "../shared/stack-context";
import type { ContainerResources, KubernetesFields, PodSettings } from "../shared/pod";
import type { SecretKeyRef } from "../shared/secret";

/**
 * A namespace's name (DNS-1123 label).
 * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
 */
export type NamespaceName = string;

/**
 * An image reference, matched as written.
 * @pattern ^\S+$
 */
export type ImageName = string;

/** Webhook authorizer: `url` (set it with `pulumi config set --secret --path`) or `urlSecret`. */
export interface ExecGatewayWebhookConfig {
  /**
   * The webhook URL (secret config).
   * @pattern ^(https?://.+)?$
   */
  url?: string;
  /** An existing Secret key holding the webhook URL, instead of `url`. */
  urlSecret?: SecretKeyRef;
  /**
   * How long to wait for the webhook before denying (default 3000).
   * @asType integer
   * @minimum 1
   */
  timeoutMs?: number;
}

/** The exec gateway: a shell in any running container over one WebSocket. */
export interface ExecGatewayConfig extends PodSettings {
  /** The gateway image (default registry ghcr.io, repository entryway/exec-gateway, tag 0.1.0); a digest wins over the tag. */
  image?: ImageSettings;
  /**
   * Replicas when not autoscaled (default 2).
   * @minimum 1
   * @asType integer
   */
  replicas?: number;
  /**
   * The numeric, non-root user the gateway runs as (default 1000).
   * @minimum 1
   * @asType integer
   */
  runAsUser?: number;
  /** Container resources (default requests 50m/64Mi, limit 256Mi memory). */
  resources?: ContainerResources;
  /**
   * The namespaces the gateway may enter (a Role and RoleBinding in each). Required unless clusterWide.
   * @uniqueItems true
   */
  targetNamespaces?: NamespaceName[];
  /** Grant exec in every namespace through a ClusterRole (default false). Only when explicitly wanted. */
  clusterWide?: boolean;
  /**
   * Let targetNamespaces (and clusterWide sessions) reach the stack's other namespaces, the CONNECT
   * gateway's (default false: refused, as the gateway's own always is).
   */
  allowOwnedNamespaces?: boolean;
  /** Who decides (default kubernetes: TokenReview + SubjectAccessReview). */
  authorizer?: ExecGatewayAuthorizer;
  /** Webhook authorizer: `url` (set it with `pulumi config set --secret --path`) or `urlSecret`. */
  webhook?: ExecGatewayWebhookConfig;
  /** OIDC authorizer. */
  oidc?: ExecGatewayOidcArgs;
  /** Gateway settings, keys of its settings document (gateway/README.md, "Settings"). */
  settings?: ExecGatewaySettings;
  /** CPU autoscaling with an HPA instead of fixed replicas. */
  autoscaling?: ExecGatewayAutoscalingArgs;
  /** NetworkPolicy peers allowed to connect (default: the ingressNamespace). */
  allowFrom?: KubernetesFields[];
  /**
   * The namespace of the ingress gateway or controller (default istio-system).
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  ingressNamespace?: string;
  /**
   * The namespace whose pods (Prometheus) may reach the metrics port (default monitoring).
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  monitoringNamespace?: string;
  /** A prometheus-operator ServiceMonitor (port metrics, /metrics) and PrometheusRule alerts, each off by default (docs/monitoring.md). */
  monitoring?: MonitoringArgs;
  /** Exposure outside the cluster, always with TLS. */
  exposure?: ExecGatewayExposureArgs;
  /** Session recordings (off without it): a volume (ReadWriteOnce needs replicas: 1), or an S3 bucket (`s3`: any number of replicas). */
  recordings?: ExecGatewayRecordingsConfig;
  /** Annotations on the gateway's ServiceAccount, e.g. eks.amazonaws.com/role-arn for IRSA. */
  serviceAccountAnnotations?: Record<string, string>;
  /** Debug containers for distroless pods, from these images only (off without it; adds patch pods/ephemeralcontainers to the gateway's roles). */
  debugContainers?: ExecGatewayDebugContainersConfig;
  /**
   * PEM certificates (BEGIN/END CERTIFICATE blocks only) the gateway trusts besides the public roots,
   * for an https endpoint a platform signs itself (an in-cluster S3 server, OIDC issuer, webhook): a
   * ConfigMap is made, the gateway reads it at start (NODE_EXTRA_CA_CERTS), a change rolls its pods.
   * Give this or existingCaConfigMap.
   * @pattern ^(\s*-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=]+\r?\n)+-----END CERTIFICATE-----)+\s*$
   */
  caBundle?: string;
  /** An existing ConfigMap key (in the gateway's namespace) holding such certificates, instead of caBundle; restart the gateway after changing it. */
  existingCaConfigMap?: ConfigMapKeyRef;
}

/** Debug containers (ExecGatewayDebugContainersArgs). */
export interface ExecGatewayDebugContainersConfig extends ExecGatewayDebugContainersArgs {
  /**
   * The images a client may ask for, matched exactly (e.g. "registry.example.com/debug/busybox:1.36").
   * @minItems 1
   * @uniqueItems true
   */
  images: ImageName[];
}

/** Recordings in an S3 bucket (ExecGatewayRecordingsS3Args). */
export interface ExecGatewayRecordingsS3Config extends ExecGatewayRecordingsS3Args {
  /**
   * The bucket (it must exist).
   * @pattern ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$
   */
  bucket: string;
  /**
   * An S3-compatible server's endpoint, https://host[:port] (default: Amazon S3 for the region).
   * @pattern ^https://[^/\s:@]+(:[0-9]{1,5})?/?$
   */
  endpoint?: string;
  /**
   * Prepended to every object key, e.g. "recordings/" (default none).
   * @pattern ^([A-Za-z0-9!_.*'()-][A-Za-z0-9!_.*'()/-]{0,511})?$
   */
  prefix?: string;
  /**
   * An existing Secret with the keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default none: the pod's identity).
   * @pattern ^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$
   */
  credentialsSecret?: string;
}

/** Session recordings (ExecGatewayRecordingsArgs): a volume, or with `s3` a bucket. */
export interface ExecGatewayRecordingsConfig extends ExecGatewayRecordingsArgs {
  /** Record to this S3 bucket instead of a volume (then without the volume settings). */
  s3?: ExecGatewayRecordingsS3Config;
  /**
   * Days a recording is kept (default 30; 0: forever).
   * @minimum 0
   * @asType integer
   */
  retentionDays?: number;
  /**
   * The volume's size (default "10Gi").
   * @pattern ^[0-9]+(\.[0-9]+)?([EPTGMK]i?)?$
   */
  size?: string;
}

/** ExecGatewayArgs from the stack config section; `ownedNamespaces` are the stack's others (refused unless allowOwnedNamespaces). @internal */
export function execGatewayArgs(
  config: ExecGatewayConfig,
  namespace: ExecGatewayArgs["namespace"],
  { labels, global, dns, ownedNamespaces = [] }: StackContext & { ownedNamespaces?: string[] } = {},
): ExecGatewayArgs {
  const { allowOwnedNamespaces, ...rest } = config;
  const refused = allowOwnedNamespaces ? [] : ownedNamespaces;
  return {
    ...rest,
    namespace,
    labels,
    global,
    dns,
    ...(refused.length > 0 ? { refusedNamespaces: refused } : {}),
  };
}
