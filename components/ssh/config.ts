/**
 * The stack config sections `connectGateway` and `workspaces` (StackConfig, components/stack) and
 * their mapping to ConnectGatewayArgs / SshWorkspaceArgs. The shapes mirror the chart's values of
 * the same names (charts/entryway/values.yaml), without the chart's `enabled` switches: a present
 * section is on.
 */
import type { ImagePullPolicy, ImageSettings } from "../shared/image";
import type { MonitoringArgs } from "../shared/monitoring";
import type { InClusterPeer, NetworkPolicyEgressRule } from "../shared/network";
import type { ContainerResources, PodSettings } from "../shared/pod";
import type { StackContext } from "../shared/stack-context";
import type {
  ConnectGatewayArgs,
  ConnectGatewayAutoscaling,
  ConnectGatewayServiceType,
  ConnectGatewayTls,
  ConnectGatewayWorkspace,
} from "./connect-gateway";
import type { ConnectGatewayRegistration } from "./contract";
import type {
  SecretKeyReference,
  SshWorkspaceArgs,
  SshWorkspaceDisruption,
  SshWorkspaceStorage,
  SshWorkspaceTcpForwarding,
} from "./ssh-workspace";

/** The dedicated Istio CONNECT gateway for SSH workspaces. */
export interface ConnectGatewayConfig extends PodSettings {
  /**
   * The gateway's own namespace (default `<namespace>-connect`): it holds the gateway, the
   * workspaces' route patches and the TLS Secret, and nothing else.
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  namespace?: string;
  /** Create the gateway's namespace (default true); false when the platform creates namespaces. */
  createNamespace?: boolean;
  /**
   * The CONNECT port (default 2222); 80, 443 and Istio's 150xx ports are refused.
   * @minimum 1
   * @maximum 65535
   * @asType integer
   */
  port?: number;
  /**
   * The DNS name users reach the gateway by (ssh configs; the TLS host).
   * @maxLength 253
   * @pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
   */
  hostname?: string;
  /** LoadBalancer (default), NodePort or ClusterIP. */
  serviceType?: ConnectGatewayServiceType;
  /** Annotations for the Service (load balancer settings). */
  serviceAnnotations?: Record<string, string>;
  /**
   * A fixed node port (NodePort and LoadBalancer).
   * @minimum 30000
   * @maximum 32767
   * @asType integer
   */
  nodePort?: number;
  /** Admit CONNECT only from these client CIDRs (default: from anywhere). */
  allowedSourceRanges?: SourceRange[];
  /** TLS on the CONNECT hop, terminated by the gateway. */
  tls?: ConnectGatewayTls;
  /**
   * Replicas when not autoscaled (default 2).
   * @minimum 1
   * @asType integer
   */
  replicas?: number;
  /** A HorizontalPodAutoscaler instead of fixed replicas. */
  autoscaling?: ConnectGatewayAutoscaling;
  /**
   * The Istio revision to inject from (default: the default injector).
   * @pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
   */
  revision?: string;
  /**
   * The injected proxy's image pull policy (default: the API server's, Always for `image: auto`,
   * which has no tag). Istio's injection keeps the pod's own value over its template's (istio
   * pkg/kube/inject/webhook.go, reapplyOverwrittenContainers), so istiod's
   * `global.imagePullPolicy` does not apply here: IfNotPresent for preloaded or mirrored proxies.
   */
  imagePullPolicy?: ImagePullPolicy;
  /** The proxy container's resources. */
  resources?: ContainerResources;
  /** A prometheus-operator PodMonitor of its Envoy (port http-envoy-prom, /stats/prometheus) and PrometheusRule alerts, each off by default (docs/monitoring.md). */
  monitoring?: MonitoringArgs;
}

/**
 * A client CIDR, IPv4 or IPv6 (the pattern says {0,} where "*" and "/" would end this comment).
 * @pattern ^(\d{1,3}(\.\d{1,3}){3}/(3[0-2]|[12]?\d)|[0-9a-fA-F:]+:[0-9a-fA-F:]{0,}/(12[0-8]|1[01]\d|[1-9]?\d))$
 */
export type SourceRange = string;

/**
 * One OpenSSH public key line: type, key and an optional comment. The comment holds no control
 * character (Unicode Cc: C0, DEL and C1, NEL U+0085 among them) and no line or paragraph separator
 * (U+2028, U+2029): YAML 1.1 (go-yaml, what Kubernetes decodes manifests with) reads CR, NEL, U+2028
 * and U+2029 as line breaks, so such a comment could end the line it is written on.
 * @pattern ^[ \t]*(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*( [^\p{Cc}\p{Zl}\p{Zp}]*)?[ \t]*\n?$
 */
export type AuthorizedKey = string;

/** One SSH workspace; its objects are named `<name>-ws-<workspace name>`. */
export interface SshWorkspaceConfig extends PodSettings {
  /**
   * The workspace name.
   * @pattern ^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$
   */
  name: string;
  /**
   * Its namespace (default: the stack's).
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  namespace?: string;
  /**
   * The login user, which must exist in the image (default dev).
   * @pattern ^[a-z_][a-z0-9_-]{0,31}$
   */
  user?: string;
  /**
   * The user's numeric, non-root id (default 1000); sshd runs as it.
   * @minimum 1
   * @asType integer
   */
  uid?: number;
  /** The image: images/ssh-workspace or one that extends it, over workspaceDefaults.image field by field (a digest wins over the tag). */
  image?: ImageSettings;
  /** Image pull policy (default IfNotPresent). */
  imagePullPolicy?: ImagePullPolicy;
  /**
   * OpenSSH public keys allowed to log in. Give this or authorizedKeysSecret.
   * @minItems 1
   */
  authorizedKeys?: AuthorizedKey[];
  /** An existing Secret in the workspace's namespace holding the authorized_keys file. */
  authorizedKeysSecret?: SecretKeyReference;
  /** The persistent home volume (default 10Gi, the default StorageClass). */
  storage?: SshWorkspaceStorage;
  /**
   * Envoy's idle timeout for the tunnel (default "3600s").
   * @pattern ^\d+(\.\d{1,9})?s$
   */
  idleTimeout?: string;
  /** The sshd container's resources. */
  resources?: ContainerResources;
  /**
   * sshd's port and socket forwarding: none (default) or local (`ssh -L`; VS Code Remote-SSH needs it).
   */
  tcpForwarding?: SshWorkspaceTcpForwarding;
  /** Egress beyond the cluster DNS, as NetworkPolicy egress rules (default: none). */
  egress?: NetworkPolicyEgressRule[];
  /**
   * Whether node drains may move the workspace: never (default; its PDB allows no eviction, so an
   * operator deletes the pod before a node upgrade) or allowed (a drain moves it, cutting sessions).
   */
  disruption?: SshWorkspaceDisruption;
  /**
   * The `Host` alias in the stack's sshConfig output (default `<name>-ws-<workspace name>`).
   * @pattern ^[A-Za-z0-9][A-Za-z0-9._-]*$
   */
  sshAlias?: string;
}

/** The in-cluster peers the stack's NetworkPolicies name. */
export interface NetworkPeersConfig {
  /** The cluster DNS every workload may ask (default: pods `k8s-app: kube-dns` in kube-system). */
  dns?: InClusterPeer;
  /** istiod, which the CONNECT gateway reaches on 15012 (default: pods `app: istiod` in istio-system). */
  istiod?: InClusterPeer;
}

/** The connect gateway's namespace: its own, `<namespace>-connect` unless named. @internal */
export function connectNamespace(config: ConnectGatewayConfig, stackNamespace: string): string {
  const namespace = config.namespace ?? `${stackNamespace}-connect`;
  if (namespace.length > 63) {
    throw new Error(
      `entryway:stack: the connect gateway's namespace ${namespace} is longer than 63 characters; set connectGateway.namespace`,
    );
  }
  if (namespace === stackNamespace) {
    throw new Error(
      `entryway:stack: connectGateway.namespace must differ from the stack's namespace ${stackNamespace}: the internet-facing gateway may read every Secret in its own`,
    );
  }
  return namespace;
}

/** ConnectGatewayArgs from the stack config; `workspaces` are the ones the stack declares (the only ones its egress admits). @internal */
export function connectGatewayArgs(
  config: ConnectGatewayConfig,
  namespace: string,
  network: NetworkPeersConfig,
  { labels, global, workspaces = [] }: Omit<StackContext, "dns"> & { workspaces?: ConnectGatewayWorkspace[] } = {},
): ConnectGatewayArgs {
  const { createNamespace: _createNamespace, ...rest } = config;
  return { ...rest, namespace, dns: network.dns, istiod: network.istiod, labels, global, workspaces };
}

/** What every workspace gets unless its item says otherwise (the chart's `workspaceDefaults`). */
export interface WorkspaceDefaultsConfig {
  /** The workspace image (default registry ghcr.io, repository entryway/ssh-workspace, tag 0.1.0); a digest wins over the tag. */
  image?: ImageSettings;
}

/**
 * SshWorkspaceArgs from a workspace item of the stack config, its image over `defaults`' field by
 * field; `stackNamespace` is where it runs unless the item names a namespace, `instance` the stack's name.
 * @internal
 */
export function sshWorkspaceArgs(
  config: SshWorkspaceConfig,
  gateway: ConnectGatewayRegistration,
  {
    stackNamespace,
    instance,
    labels,
    defaults,
    global,
  }: Omit<StackContext, "dns"> & { stackNamespace: string; instance: string; defaults?: WorkspaceDefaultsConfig },
): SshWorkspaceArgs {
  const { name: _name, ...rest } = config;
  // The item's image fields over the defaults', an empty field falling back as the chart's merge does.
  const ownImage = Object.fromEntries(Object.entries(rest.image ?? {}).filter(([, value]) => value));
  return {
    ...rest,
    image: { ...defaults?.image, ...ownImage },
    global,
    namespace: rest.namespace ?? stackNamespace,
    gateway,
    instance,
    labels,
  };
}
