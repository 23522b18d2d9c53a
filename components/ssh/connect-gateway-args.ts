// ConnectGateway's public types: the enum and interfaces of its args (the component is in
// connect-gateway.ts, the checks of its args in validate.ts).
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings, ImagePullPolicy } from "../shared/image";
import type { MonitoringArgs } from "../shared/monitoring";
import type { InClusterPeer } from "../shared/network";
import type { PodSettings } from "../shared/pod";
import type { ValueOf } from "../shared/enum";

/**
 * The gateway Service's type. An `as const` object with a type of the same name: TypeScript takes
 * the plain strings, Pulumi's component analyzer reads it as an enum (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, extractEnumMembers).
 */
export const ConnectGatewayServiceType = {
  /** A cloud load balancer (the default). */
  LoadBalancer: "LoadBalancer",
  /** A port on every node. */
  NodePort: "NodePort",
  /** In-cluster only. */
  ClusterIP: "ClusterIP",
} as const;
export type ConnectGatewayServiceType = ValueOf<typeof ConnectGatewayServiceType>;

/** A HorizontalPodAutoscaler for the gateway. */
export interface ConnectGatewayAutoscaling {
  /**
   * Lowest replica count (default 2).
   * @minimum 1
   * @asType integer
   */
  minReplicas?: number;
  /**
   * Highest replica count (default 5).
   * @minimum 1
   * @asType integer
   */
  maxReplicas?: number;
  /**
   * Average CPU utilisation to aim for, in percent of the request (default 80).
   * @minimum 1
   * @maximum 100
   * @asType integer
   */
  targetCPUUtilizationPercentage?: number;
}

/** TLS on the CONNECT hop, terminated by the gateway. */
export interface ConnectGatewayTls {
  /**
   * A kubernetes.io/tls Secret in the gateway's namespace (tls.crt, tls.key) that Istio serves.
   * @pattern ^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$
   */
  credentialName: string;
}

export interface ConnectGatewayArgs extends PodSettings {
  /**
   * The namespace of the gateway and of the workspaces' route patches. Plain: names must be known
   * at preview. Give the internet-facing gateway a namespace of its own that holds no Secret but
   * its TLS certificate: with TLS its ServiceAccount may list every Secret there (the Stack and the
   * chart arrange it; the policy pack refuses anything else).
   */
  namespace: string;
  /** The CONNECT port (default 2222). 80, 443 and Istio's own ports are refused. */
  port?: number;
  /** The name users reach the gateway by (DNS name of the load balancer); goes into ssh configs and is the TLS host. */
  hostname?: string;
  /** Service type: LoadBalancer (default), NodePort or ClusterIP. */
  serviceType?: ConnectGatewayServiceType;
  /** Annotations for the Service (load balancer settings). */
  serviceAnnotations?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** A fixed node port (NodePort and LoadBalancer only). */
  nodePort?: number;
  /** Admit CONNECT only from these client CIDRs (AuthorizationPolicy; also loadBalancerSourceRanges). Default: anywhere. */
  allowedSourceRanges?: string[];
  /** TLS on the CONNECT hop, terminated by the gateway. */
  tls?: ConnectGatewayTls;
  /** Replicas when not autoscaled (default 2). */
  replicas?: number;
  /** A HorizontalPodAutoscaler instead of a fixed replica count. */
  autoscaling?: ConnectGatewayAutoscaling;
  /** The Istio revision to inject from (default: the default injector). */
  revision?: string;
  /**
   * The injected proxy's image pull policy (default: the API server's, Always for `image: auto`).
   * Istio's injection keeps the pod's own value over its template's (istio
   * pkg/kube/inject/webhook.go, reapplyOverwrittenContainers): IfNotPresent for preloaded proxies.
   */
  imagePullPolicy?: ImagePullPolicy;
  /** Container resources (default: 100m CPU, 128Mi requested; 512Mi memory limit). */
  resources?: pulumi.Input<k8s.types.input.core.v1.ResourceRequirements>;
  /** The cluster DNS the gateway and its workspaces may ask (default: kube-dns in kube-system). */
  dns?: InClusterPeer;
  /** istiod, which the gateway's proxy reaches on 15012 (default: app=istiod in istio-system). */
  istiod?: InClusterPeer;
  /**
   * The workspaces the gateway may reach (SshWorkspaces whose instance is this gateway's name, as
   * the Stack makes them): its NetworkPolicy admits sshd on the pods of this instance's workspaces,
   * in those workspaces' namespaces only. It selects by namespace and instance, not by workspace, so
   * that adding a workspace in a namespace already listed changes no existing object (a CI preview
   * shows only the new workspace's creates). Without it, any pod labelled
   * app.kubernetes.io/name=ssh-workspace in any namespace (for workspaces declared elsewhere). The
   * Stack passes the workspaces it declares. Plain.
   */
  workspaces?: ConnectGatewayWorkspace[];
  /** A prometheus-operator PodMonitor of its Envoy (port http-envoy-prom) and PrometheusRule alerts, each off by default (docs/monitoring.md). */
  monitoring?: MonitoringArgs;
  /** Labels added to every object. */
  labels?: Record<string, string>;
  /** The global pull secrets (the proxy's image is Istio's injection, so no registry applies). */
  global?: GlobalSettings;
}

/** A workspace the CONNECT gateway may reach. */
export interface ConnectGatewayWorkspace {
  /** The workspace's namespace. */
  namespace: string;
  /** The SshWorkspace's name, which is its app.kubernetes.io/component label (the Stack's: objectName(<stack name>, "ws", <name>)). */
  name: string;
}
