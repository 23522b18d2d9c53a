// The exec gateway's public types: the enums and interfaces of ExecGateway's args.
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings, ImageSettings } from "../shared/image";
import type { MonitoringArgs } from "../shared/monitoring";
import type { InClusterPeer } from "../shared/network";
import type { SecretKeyRef } from "../shared/secret";
import type { KubernetesFields, PodSettings } from "../shared/pod";
import type { ValueOf } from "../shared/enum";

/**
 * Who decides whether a user may enter a pod. The union types of the args are `as const`
 * objects with a type of the same name: TypeScript takes the plain strings, and Pulumi's
 * component analyzer reads them as enums (pulumi/pulumi sdk/nodejs/provider/experimental/analyzer.ts,
 * analyzeType and extractEnumMembers), which it takes in place of a bare string union.
 */
export const ExecGatewayAuthorizer = {
  /** TokenReview + SubjectAccessReview against the cluster's own RBAC. */
  Kubernetes: "kubernetes",
  /** The platform's console decides per request. */
  Webhook: "webhook",
  /** JWTs checked against an OIDC issuer's keys. */
  Oidc: "oidc",
} as const;
export type ExecGatewayAuthorizer = ValueOf<typeof ExecGatewayAuthorizer>;

/** How the WebSocket endpoint is exposed outside the cluster. */
export const ExecGatewayExposureKind = {
  /** An Istio Gateway (HTTPS) and a VirtualService. */
  Istio: "istio",
  /** A networking.k8s.io Ingress. */
  Ingress: "ingress",
} as const;
export type ExecGatewayExposureKind = ValueOf<typeof ExecGatewayExposureKind>;

/** The recordings volume's access mode. */
export const RecordingsAccessMode = {
  /** One node mounts it: the gateway runs one replica. */
  ReadWriteOnce: "ReadWriteOnce",
  /** Every replica mounts it. */
  ReadWriteMany: "ReadWriteMany",
} as const;
export type RecordingsAccessMode = ValueOf<typeof RecordingsAccessMode>;

/** The gateway's log level. */
export const ExecGatewayLogLevel = { Debug: "debug", Info: "info", Warn: "warn", Error: "error" } as const;
export type ExecGatewayLogLevel = ValueOf<typeof ExecGatewayLogLevel>;

/**
 * A group or an audience: never empty.
 * @minLength 1
 */
export type ExecGatewayName = string;

/**
 * A browser origin, scheme and host (and port) only.
 * @pattern ^https?://[^/\s]+$
 */
export type ExecGatewayOrigin = string;

/**
 * A JWT signature algorithm the gateway verifies (its default list, gateway/src/config.ts).
 * @pattern ^(RS256|RS384|RS512|PS256|PS384|PS512|ES256|ES384|ES512|EdDSA)$
 */
export type ExecGatewayOidcAlgorithm = string;

/**
 * A proxy's address or CIDR.
 * @pattern ^[0-9a-fA-F:.]+(/[0-9]{1,3})?$
 */
export type ExecGatewayProxyAddress = string;

/** Webhook authorizer: the platform's console decides per request (Entry's own model). */
export interface ExecGatewayWebhookArgs {
  /**
   * The webhook URL; it may carry a credential, so it is stored in a Secret the component makes
   * (pass a Pulumi secret). Give this or `urlSecret`.
   */
  url?: pulumi.Input<string>;
  /** An existing Secret key holding the webhook URL, instead of `url`. */
  urlSecret?: SecretKeyRef;
  /** How long to wait for the webhook before denying (default 3000). */
  timeoutMs?: number;
}

/** OIDC authorizer: JWTs checked against the issuer's keys; a claim lists the namespaces. */
export interface ExecGatewayOidcArgs {
  /**
   * The issuer URL (iss): https (plain http only to a loopback address).
   * @pattern ^(https://|http://(localhost|127\.[0-9]+\.[0-9]+\.[0-9]+|\[::1\])(:[0-9]+)?(/|$))
   */
  issuer: string;
  /** The audience the token must carry (aud). */
  audience: string;
  /**
   * The JWKS URL (https, or plain http to a loopback address); by default discovered from the issuer.
   * @pattern ^(https://|http://(localhost|127\.[0-9]+\.[0-9]+\.[0-9]+|\[::1\])(:[0-9]+)?(/|$))
   */
  jwksUri?: string;
  /** The claim naming the user (default "sub"). */
  usernameClaim?: string;
  /** The claim listing the namespaces the user may enter (default "namespaces"). */
  namespacesClaim?: string;
  /** The claim listing the user's groups, matched against settings.reviewerGroups (default "groups"). */
  groupsClaim?: string;
  /**
   * Tokens issued (iat) longer ago than this are refused, whatever their exp (default 86400).
   * @asType integer
   * @minimum 1
   */
  maxTokenAgeSeconds?: number;
  /**
   * Accepted signature algorithms (default all RS*, PS*, ES* and EdDSA); "none" and HS* are refused.
   * @uniqueItems true
   */
  algorithms?: ExecGatewayOidcAlgorithm[];
}

/** Exposure of the WebSocket endpoint outside the cluster, always with TLS. */
export interface ExecGatewayExposureArgs {
  /** "istio": an Istio Gateway (HTTPS) and a VirtualService; "ingress": a networking.k8s.io Ingress. */
  kind: ExecGatewayExposureKind;
  /**
   * The public host name, e.g. "exec.example.com".
   * @pattern ^((\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+)?$
   */
  host: string;
  /**
   * The TLS certificate Secret (kubernetes.io/tls). For Istio it is the Gateway's credentialName
   * and must live in the ingress gateway's namespace; for an Ingress, in the gateway's namespace.
   */
  tlsSecretName: string;
  /** Istio: the labels selecting the ingress gateway pods (default {istio: "ingressgateway"}). */
  istioSelector?: Record<string, string>;
  /** Ingress: the IngressClass (default: the cluster's default class). */
  ingressClassName?: string;
  /** Ingress: extra annotations, e.g. longer proxy timeouts for long shell sessions. */
  annotations?: Record<string, string>;
}

/** Optional horizontal autoscaling on CPU. */
export interface ExecGatewayAutoscalingArgs {
  /**
   * The fewest replicas.
   * @asType integer
   * @minimum 1
   */
  minReplicas: number;
  /**
   * The most replicas.
   * @asType integer
   * @minimum 1
   */
  maxReplicas: number;
  /**
   * Target average CPU utilisation in percent (default 70).
   * @asType integer
   * @minimum 1
   * @maximum 100
   */
  targetCPUUtilizationPercentage?: number;
}

/**
 * Session recordings in an S3 bucket (Amazon S3 or an S3-compatible server; see gateway/README.md,
 * "Recordings in S3"): each recording is uploaded while its session runs, and every replica lists
 * and serves every recording, so replicas and autoscaling stay free. Credentials come from
 * `credentialsSecret`, or without it from the pod's identity (IRSA, workload identity: annotate the
 * ServiceAccount with serviceAccountAnnotations). Retention is the bucket's lifecycle rule
 * (docs/exec-gateway.md shows it with the bucket policy).
 */
export interface ExecGatewayRecordingsS3Args {
  /** The bucket (it must exist). */
  bucket: string;
  /** An S3-compatible server's endpoint, https://host[:port] (default: Amazon S3 for the region). */
  endpoint?: string;
  /** The bucket's region (default: the pod's AWS_REGION, else us-east-1). */
  region?: string;
  /** Prepended to every object key, e.g. "recordings/" (default none). */
  prefix?: string;
  /** Path-style addressing (endpoint/bucket/key), as many S3-compatible servers want (default false). */
  forcePathStyle?: boolean;
  /** An existing Secret in the gateway's namespace with the keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default none: the pod's identity). */
  credentialsSecret?: string;
}

/**
 * Session recordings (asciicast v2, one per session; see gateway/README.md): on a volume of their
 * own, or with `s3` in a bucket. A ReadWriteOnce volume attaches to one node: the gateway then runs
 * as one replica (replicas: 1, no autoscaling) and is replaced with the Recreate strategy, since a
 * surge pod on another node could not mount it. With a ReadWriteMany storage class every replica
 * writes to and serves from the same volume; with `s3`, every replica the same bucket.
 */
export interface ExecGatewayRecordingsArgs {
  /** Record to this S3 bucket instead of a volume (the volume settings are then not allowed). */
  s3?: ExecGatewayRecordingsS3Args;
  /** The volume's size (default "10Gi"). */
  size?: string;
  /** Its StorageClass (default: the cluster's default class). */
  storageClassName?: string;
  /** Recordings older than this many days are deleted by the gateway (default 30; 0 keeps them). */
  retentionDays?: number;
  /** "ReadWriteOnce" (default: one replica) or "ReadWriteMany" (any number of replicas). */
  accessMode?: RecordingsAccessMode;
}

/**
 * Debug containers for distroless pods (see gateway/README.md): a client may ask for a shell in an
 * ephemeral container added to the target pod, in the target container's process namespace, from
 * one of these images only. The gateway's Roles (or ClusterRole) then also grant `patch` on
 * pods/ephemeralcontainers; each request also takes a second SubjectAccessReview for the user
 * (the kubernetes authorizer only).
 */
export interface ExecGatewayDebugContainersArgs {
  /** The images a client may ask for, matched exactly (e.g. "registry.example.com/debug/busybox:1.36"). */
  images: string[];
  /**
   * The image for `--debug` without one (default: the first of images).
   * @pattern ^\S*$
   */
  defaultImage?: string;
}

/** A key in an existing ConfigMap. */
export interface ConfigMapKeyRef {
  /**
   * The ConfigMap's name (in the gateway's namespace).
   * @pattern ^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$
   */
  name: string;
  /**
   * The key in it.
   * @pattern ^[-._a-zA-Z0-9]+$
   */
  key: string;
}

/**
 * Service settings, passed as they are into the gateway's settings document (config.json of its
 * ConfigMap): each key is the gateway's own setting of the same name (gateway/README.md, "Settings").
 */
export interface ExecGatewaySettings {
  /** Let clients choose the command (default true). */
  allowCommand?: boolean;
  /**
   * Close a session idle this long (default 1800000 ms).
   * @asType integer
   * @minimum 0
   */
  idleTimeoutMs?: number;
  /**
   * Sessions per replica (default 500).
   * @asType integer
   * @minimum 0
   */
  maxSessions?: number;
  /**
   * Sessions per user per replica (default 10).
   * @asType integer
   * @minimum 0
   */
  maxSessionsPerUser?: number;
  /**
   * Application PING interval (default 10000 ms, as Entry).
   * @asType integer
   * @minimum 0
   */
  pingIntervalMs?: number;
  /**
   * End a session after this long whatever it does; 0 for no limit (default 43200). It also ends when its token expires.
   * @asType integer
   * @minimum 0
   */
  maxSessionSeconds?: number;
  /**
   * How often a running session's grant is asked again (kubernetes and webhook authorizers); a no ends it; 0: never (default 300000 ms).
   * @asType integer
   * @minimum 0
   */
  reauthorizeIntervalMs?: number;
  /**
   * Connections waiting for authorization per replica; more are answered 503 (default 256).
   * @asType integer
   * @minimum 1
   */
  maxPendingConnections?: number;
  /**
   * Connections waiting for authorization per client address; more are answered 429 (default 64).
   * @asType integer
   * @minimum 1
   */
  maxPendingPerSource?: number;
  /**
   * Upgrades (each can cost an authorizer call) per client address per minute; more are answered 429 (default 600).
   * @asType integer
   * @minimum 1
   */
  authAttemptsPerMinute?: number;
  /** Proxies (CIDRs) whose X-Forwarded-For names the client: the ingress gateway's pod network (default none). */
  trustedProxies?: ExecGatewayProxyAddress[];
  /**
   * Proxies in front of the gateway that each append the address they saw to X-Forwarded-For; the
   * client is that many addresses from the right (default 1 when exposed and trustedProxies is
   * unset: the Istio ingress gateway or ingress controller exposure routes through; else 0).
   * @asType integer
   * @minimum 0
   */
  trustedProxyHops?: number;
  /** Origins a browser may open a session from (default: https://<exposure.host> when exposed, else the gateway's own origin when reached by IP address or localhost). */
  allowedOrigins?: ExecGatewayOrigin[];
  /**
   * The kubernetes authorizer's TokenReview audiences (default ["entryway"]: `kubectl create token --audience entryway`).
   * @minItems 1
   */
  tokenAudiences?: ExecGatewayName[];
  /** Log level (default "info"). */
  logLevel?: ExecGatewayLogLevel;
  /** Groups (as the authorizer names them) whose members may list and download recordings (default none). */
  reviewerGroups?: ExecGatewayName[];
  /**
   * The command run when the client names none, as an argument list (default: bash, else sh).
   * @minItems 1
   */
  shell?: string[];
  /**
   * WebSocket pings; a peer missing one is dropped; 0: off (default 30000 ms).
   * @asType integer
   * @minimum 0
   */
  wsPingIntervalMs?: number;
  /**
   * How long a browser may take to send its AUTH message when no token came with the upgrade (default 3000 ms).
   * @asType integer
   * @minimum 1
   */
  authTimeoutMs?: number;
  /**
   * The largest frame a client may send; larger closes the session with 1009 (default 65536).
   * @asType integer
   * @minimum 1
   */
  maxFrameBytes?: number;
  /**
   * The largest output per frame (default 32768).
   * @asType integer
   * @minimum 4
   */
  outputFrameBytes?: number;
  /**
   * Queued output that pauses the exec stream (default 1048576); at least bufferLowBytes.
   * @asType integer
   * @minimum 1
   */
  bufferHighBytes?: number;
  /**
   * Queued output under which the exec stream resumes (default 262144); at most bufferHighBytes.
   * @asType integer
   * @minimum 0
   */
  bufferLowBytes?: number;
  /**
   * Seconds between SIGHUP and SIGKILL when ending an abandoned shell (default 2).
   * @asType integer
   * @minimum 0
   */
  reapGraceSeconds?: number;
  /**
   * The longest an abandoned shell's reaper may run, its grace included, so more than reapGraceSeconds x 1000; then it is given up (default 15000 ms).
   * @asType integer
   * @minimum 1
   */
  reapTimeoutMs?: number;
  /**
   * S3 recordings: what is not in a part yet is stored this often, the most output a dying gateway loses (default 10).
   * @asType integer
   * @minimum 1
   * @maximum 3600
   */
  recordFlushSeconds?: number;
  /**
   * S3 recordings: the multipart part size, 5 MiB to 5 GiB, S3's part sizes (default 5242880).
   * @asType integer
   * @minimum 5242880
   * @maximum 5368709120
   */
  recordPartBytes?: number;
  /**
   * A recording write (file append, or S3 request with its retries) taking longer ends its session (default 30000 ms).
   * @asType integer
   * @minimum 100
   */
  recordWriteTimeoutMs?: number;
  /**
   * The longest wait for a debug container to run, image pull included (default 60000 ms).
   * @asType integer
   * @minimum 1
   */
  debugStartTimeoutMs?: number;
}

/** The arguments of an ExecGateway. */
export interface ExecGatewayArgs extends PodSettings {
  /** The namespace the gateway runs in. */
  namespace: pulumi.Input<string>;
  /**
   * The namespaces the gateway may enter: a Role and RoleBinding in each grant `create` on
   * pods/exec and read access to pods, Deployments, StatefulSets and ReplicaSets there, nothing else.
   * Plain (it decides which objects exist).
   */
  targetNamespaces?: string[];
  /**
   * Namespaces the gateway never enters (refused at request time, also with clusterWide), which
   * targetNamespaces may not name: the stack's other namespaces, e.g. the CONNECT gateway's, whose
   * pods' service account reads its TLS key. The Stack sets it. Plain.
   */
  refusedNamespaces?: string[];
  /**
   * Grant exec in EVERY namespace through a ClusterRole (default false). Only when explicitly
   * wanted; the policy pack flags it unless allowed there too.
   */
  clusterWide?: boolean;
  /** Who decides (default "kubernetes": TokenReview + SubjectAccessReview). */
  authorizer?: ExecGatewayAuthorizer;
  /** Webhook authorizer settings; required when authorizer is "webhook". */
  webhook?: ExecGatewayWebhookArgs;
  /** OIDC authorizer settings; required when authorizer is "oidc". */
  oidc?: ExecGatewayOidcArgs;
  /** The gateway image, over EXEC_GATEWAY_IMAGE field by field (a digest wins over the tag). */
  image?: ImageSettings;
  /** The global image registry (a mirror) and pull secrets. */
  global?: GlobalSettings;
  /** The cluster DNS its pods may ask (default: kube-dns in kube-system; the Stack passes networkPolicy.dns). */
  dns?: InClusterPeer;
  /** Replicas when not autoscaled (default 2). */
  replicas?: number;
  /** The numeric user the gateway runs as (default 1000, the image's `node` user). */
  runAsUser?: number;
  /** Container resources (default: requests 50m/64Mi, limit 256Mi memory). */
  resources?: pulumi.Input<k8s.types.input.core.v1.ResourceRequirements>;
  /** Gateway settings. */
  settings?: ExecGatewaySettings;
  /** Autoscaling; without it the Deployment keeps `replicas`. */
  autoscaling?: ExecGatewayAutoscalingArgs;
  /**
   * Where connections may come from (NetworkPolicy peers). Default: the namespace named
   * `ingressNamespace`, where the ingress gateway or controller runs.
   */
  allowFrom?: KubernetesFields[];
  /** The namespace of the ingress gateway or controller (default "istio-system"). */
  ingressNamespace?: string;
  /** The namespace whose pods (Prometheus) may reach the metrics port (default "monitoring"). */
  monitoringNamespace?: string;
  /** A prometheus-operator ServiceMonitor and PrometheusRule alerts (each off by default; docs/monitoring.md). */
  monitoring?: MonitoringArgs;
  /** Exposure outside the cluster; without it the gateway is reachable only in-cluster. */
  exposure?: ExecGatewayExposureArgs;
  /** Record every session's output, on a volume of its own or in an S3 bucket; without it nothing is recorded. */
  recordings?: ExecGatewayRecordingsArgs;
  /** Annotations on the gateway's ServiceAccount, e.g. eks.amazonaws.com/role-arn for IRSA (recordings.s3 without credentialsSecret). */
  serviceAccountAnnotations?: Record<string, string>;
  /** Debug containers from an allow-list of images; without it the gateway adds none and may not. */
  debugContainers?: ExecGatewayDebugContainersArgs;
  /**
   * Certificates (PEM) the gateway trusts besides the public roots, for what it dials over https
   * that a platform signs itself: an in-cluster S3 endpoint (recordings.s3.endpoint), the OIDC
   * issuer, the webhook. Written into a ConfigMap and mounted read-only; the gateway reads them at
   * start (NODE_EXTRA_CA_CERTS), so a change rolls its pods. Give this or existingCaConfigMap.
   */
  caBundle?: string;
  /**
   * An existing ConfigMap key in the gateway's namespace holding such certificates (PEM), instead
   * of caBundle. The component does not read it: after changing it, restart the gateway's pods.
   */
  existingCaConfigMap?: ConfigMapKeyRef;
  /** Labels added to every object. */
  labels?: Record<string, string>;
}
