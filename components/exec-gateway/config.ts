/**
 * The exec gateway's section of the stack config (`entryway:stack.execGateway`): plain JSON,
 * the same shape as the chart's `execGateway` values minus `enabled` (the section's presence
 * deploys the gateway). The Stack turns it into ExecGatewayArgs.
 */
import type {
  ExecGatewayArgs,
  ExecGatewayAuthorizer,
  ExecGatewayAutoscalingArgs,
  ExecGatewayDebugContainersArgs,
  ExecGatewayExposureArgs,
  ExecGatewayOidcArgs,
  ExecGatewayRecordingsArgs,
  ExecGatewaySettings,
} from "./index";
import type { GlobalSettings, ImageSettings } from "../shared/image";
import type { ContainerResources, KubernetesFields, PodSettings } from "../shared/pod";

/** A key in an existing Secret. */
export interface ExecGatewaySecretKeyConfig {
  /**
   * The Secret's name (in the gateway's namespace).
   * @pattern ^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$
   */
  name: string;
  /**
   * The key inside it.
   * @minLength 1
   */
  key: string;
}

/** Webhook authorizer: `url` (set it with `pulumi config set --secret --path`) or `urlSecret`. */
export interface ExecGatewayWebhookConfig {
  /** The webhook URL (secret config). */
  url?: string;
  /** An existing Secret key holding the webhook URL, instead of `url`. */
  urlSecret?: ExecGatewaySecretKeyConfig;
  /** How long to wait for the webhook before denying (default 3000). */
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
  targetNamespaces?: string[];
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
  /** Gateway settings (ENTRYWAY_* variables). */
  settings?: ExecGatewaySettings;
  /** CPU autoscaling with an HPA instead of fixed replicas. */
  autoscaling?: ExecGatewayAutoscalingArgs;
  /** NetworkPolicy peers allowed to connect (default: the ingressNamespace). */
  allowFrom?: KubernetesFields[];
  /** The namespace of the ingress gateway or controller (default istio-system). */
  ingressNamespace?: string;
  /** The namespace whose pods (Prometheus) may reach the metrics port (default monitoring). */
  monitoringNamespace?: string;
  /** Exposure outside the cluster, always with TLS. */
  exposure?: ExecGatewayExposureArgs;
  /** A volume for session recordings (off without it); ReadWriteOnce needs replicas: 1. */
  recordings?: ExecGatewayRecordingsConfig;
  /** Debug containers for distroless pods, from these images only (off without it; adds patch pods/ephemeralcontainers to the gateway's roles). */
  debugContainers?: ExecGatewayDebugContainersConfig;
}

/** Debug containers (ExecGatewayDebugContainersArgs). */
export interface ExecGatewayDebugContainersConfig extends ExecGatewayDebugContainersArgs {
  /**
   * The images a client may ask for, matched exactly (e.g. "registry.example.com/debug/busybox:1.36").
   * @minItems 1
   * @uniqueItems true
   */
  images: string[];
}

/** The recordings volume (ExecGatewayRecordingsArgs). */
export interface ExecGatewayRecordingsConfig extends ExecGatewayRecordingsArgs {
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

/** ExecGatewayArgs from the stack config section; `ownedNamespaces` are the stack's others (refused unless allowOwnedNamespaces). */
export function execGatewayArgs(
  config: ExecGatewayConfig,
  namespace: ExecGatewayArgs["namespace"],
  labels?: Record<string, string>,
  global?: GlobalSettings,
  ownedNamespaces: string[] = [],
): ExecGatewayArgs {
  const { allowOwnedNamespaces, ...rest } = config;
  const refused = allowOwnedNamespaces ? [] : ownedNamespaces;
  return {
    ...rest,
    namespace,
    labels,
    global,
    ...(refused.length > 0 ? { refusedNamespaces: refused } : {}),
  };
}
