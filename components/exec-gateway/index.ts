/**
 * ExecGateway: the exec gateway service (gateway/) on Kubernetes. A non-root Deployment behind a
 * ClusterIP Service, its own ServiceAccount with least-privilege RBAC (exec into pods only in
 * the namespaces it may enter), the authorizer's settings (secrets from Secrets), a PDB, an
 * optional HPA, a NetworkPolicy, and optional WebSocket exposure with TLS through an Istio
 * Gateway + VirtualService or an Ingress.
 *
 * The chart's templates/exec-gateway/ make the same objects with the same names and specs; the
 * parity test (test/parity) keeps the two front ends equal.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { standardLabels, selectorLabels } from "../shared/labels";
import { imageReference, type GlobalSettings, type ImageSettings } from "../shared/image";
import { objectName, serviceFqdn } from "../shared/names";
import { dnsEgressRule, type InClusterPeer } from "../shared/network";
import type { SecretKeyRef } from "../shared/secret";
import { podMetadata, podPlacement, type KubernetesFields, type PodSettings } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import type { ValueOf } from "../shared/enum";
import { configChecksums, helmToJson } from "../shared/config-file";
import { schemaProblems } from "../shared/schema";
import Ajv from "ajv";
import settingsSchema from "./settings.schema.json";

/** The gateway image the chart and the component deploy unless told otherwise. @internal */
export const EXEC_GATEWAY_IMAGE: ImageSettings = {
  registry: "ghcr.io",
  repository: "entryway/exec-gateway",
  tag: "0.1.0",
};
/** The port the gateway listens on inside its pod (the service's ENTRYWAY_PORT). @internal */
export const EXEC_GATEWAY_PORT = 8080;
/** The port of /metrics and /readyz (the service's ENTRYWAY_METRICS_PORT), open only to the monitoring namespace. @internal */
export const EXEC_GATEWAY_METRICS_PORT = 9090;
/** The WebSocket endpoint's path (the service's default). @internal */
export const EXEC_GATEWAY_PATH = "/v1/enter";
/**
 * What exposure routes to the gateway: the WebSocket endpoint and the web terminal (its page at /,
 * its assets under /web/). Nothing else of the public port leaves the cluster.
 * @internal
 */
export const EXEC_GATEWAY_PUBLIC_PATHS = [
  { path: EXEC_GATEWAY_PATH, match: "exact" },
  { path: "/", match: "exact" },
  { path: "/web/", match: "prefix" },
] as const;
/** Routed too when the gateway records: reviewers list and download recordings there, and replay them on /replay. @internal */
export const EXEC_GATEWAY_RECORDING_PATHS = [
  { path: "/v1/recordings", match: "prefix" },
  { path: "/replay", match: "exact" },
] as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/;
/** As the gateway checks them (gateway/src/config.ts): S3's bucket names, https endpoints, safe key characters. */
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const S3_ENDPOINT = /^https:\/\/[^/\s:@]+(:[0-9]{1,5})?\/?$/;
const S3_PREFIX = /^([A-Za-z0-9!_.*'()-][A-Za-z0-9!_.*'()/-]{0,511})?$/;
const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

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

/** @deprecated SecretKeyRef (components/shared/secret.ts), kept so code that imports this name still compiles. */
export type ExecGatewaySecretKeyRef = SecretKeyRef;

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

/** Proxies between a client and the gateway when exposure routes it: the ingress gateway or controller. @internal */
export const EXPOSURE_PROXY_HOPS = 1;

/** Where the recordings volume is mounted in the gateway's pod (the document's recordDir). @internal */
export const EXEC_GATEWAY_RECORD_DIR = "/var/lib/entryway/recordings";
/** Where the settings ConfigMap is mounted, read-only, in the gateway's pod; ENTRYWAY_CONFIG names its file. @internal */
export const EXEC_GATEWAY_CONFIG_DIR = "/etc/entryway";
/** The settings document's key in the ConfigMap, and so its file name. @internal */
export const EXEC_GATEWAY_CONFIG_FILE = "config.json";
/** Where the CA bundle (caBundle or existingCaConfigMap) is mounted, read-only; NODE_EXTRA_CA_CERTS names its file. @internal */
export const EXEC_GATEWAY_CA_DIR = "/etc/entryway-ca";
/** The CA bundle's file name there (and its key in the ConfigMap the component makes for caBundle). @internal */
export const EXEC_GATEWAY_CA_FILE = "ca.crt";

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

const DEFAULT_RESOURCES = {
  requests: { cpu: "50m", memory: "64Mi" },
  limits: { memory: "256Mi" },
};

/**
 * Every reason the args cannot make a working, least-privilege gateway, one line each (empty when
 * they can), as the chart's entryway.execGateway.validate checks its values. Exported for the
 * settings drift test. @internal
 */
export function execGatewayProblems(args: ExecGatewayArgs): string[] {
  const problems: string[] = [];
  const targets = args.targetNamespaces ?? [];
  if (targets.length === 0 && !args.clusterWide) {
    problems.push(
      "targetNamespaces is empty: name the namespaces the gateway may enter (or set clusterWide: true explicitly)",
    );
  }
  for (const ns of targets) {
    if (ns === "*") problems.push("targetNamespaces: no wildcards; use clusterWide: true to enter every namespace");
    else if (!DNS_LABEL.test(ns)) problems.push(`targetNamespaces: "${ns}" is not a namespace name`);
  }
  if (new Set(targets).size !== targets.length) problems.push("targetNamespaces has duplicates");
  if (typeof args.namespace === "string") problems.push(...ownNamespaceProblems(args.namespace, targets));
  for (const ns of targets) {
    if (args.refusedNamespaces?.includes(ns))
      problems.push(
        `targetNamespaces includes "${ns}", a namespace the stack owns (refusedNamespaces): exec there reaches pods whose service accounts hold the stack's keys`,
      );
  }
  const authorizer = args.authorizer ?? "kubernetes";
  if (!["kubernetes", "webhook", "oidc"].includes(authorizer))
    problems.push(`authorizer "${authorizer}" is not kubernetes, webhook or oidc`);
  // A webhook that arrives as one secret Output is checked when its value is known (webhookUrl).
  if (authorizer === "webhook" && !pulumi.Output.isInstance(args.webhook)) {
    if (!args.webhook || (args.webhook.url === undefined) === (args.webhook.urlSecret === undefined))
      problems.push(WEBHOOK_ONE_OF);
  }
  if (authorizer === "oidc" && (!args.oidc?.issuer || !args.oidc.audience)) {
    problems.push('authorizer "oidc" needs oidc.issuer and oidc.audience');
  }
  // Whoever can change the issuer's answers on the way can hand the gateway a signing key of their own.
  for (const [field, url] of [
    ["oidc.issuer", args.oidc?.issuer],
    ["oidc.jwksUri", args.oidc?.jwksUri],
  ] as const) {
    if (authorizer === "oidc" && url && !isHttpsOrLoopback(url))
      problems.push(
        `${field} "${url}" must be https (plain http only to a loopback address): the keys that verify tokens come from there`,
      );
  }
  if (args.replicas !== undefined && (!Number.isInteger(args.replicas) || args.replicas < 1))
    problems.push("replicas must be an integer >= 1");
  if (args.runAsUser !== undefined && (!Number.isInteger(args.runAsUser) || args.runAsUser < 1)) {
    problems.push("runAsUser must be a non-root numeric user (>= 1)");
  }
  const hpa = args.autoscaling;
  if (hpa && (hpa.minReplicas < 1 || hpa.maxReplicas < hpa.minReplicas)) {
    problems.push("autoscaling needs 1 <= minReplicas <= maxReplicas");
  }
  const recordings = args.recordings;
  if (recordings?.s3) {
    const s3 = recordings.s3;
    const volumeSettings = (["size", "storageClassName", "accessMode", "retentionDays"] as const).filter(
      (key) => recordings[key] !== undefined,
    );
    if (volumeSettings.length > 0)
      problems.push(
        `recordings.${volumeSettings.join(", recordings.")} are for the recordings volume; with recordings.s3 there is none (a bucket lifecycle rule keeps the retention)`,
      );
    if (!S3_BUCKET.test(s3.bucket ?? ""))
      problems.push(
        `recordings.s3.bucket "${s3.bucket}" is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`,
      );
    if (s3.endpoint !== undefined && !S3_ENDPOINT.test(s3.endpoint))
      problems.push(
        `recordings.s3.endpoint "${s3.endpoint}" is not https://host[:port]: recordings hold what sessions showed`,
      );
    if (s3.prefix !== undefined && !S3_PREFIX.test(s3.prefix))
      problems.push(
        `recordings.s3.prefix "${s3.prefix}" is not a key prefix (letters, digits, !_.*'()/-; no leading /)`,
      );
    if (s3.credentialsSecret !== undefined && !DNS_SUBDOMAIN.test(s3.credentialsSecret))
      problems.push(`recordings.s3.credentialsSecret "${s3.credentialsSecret}" is not a Secret name`);
  } else if (recordings) {
    const accessMode = recordings.accessMode ?? "ReadWriteOnce";
    if (accessMode !== "ReadWriteOnce" && accessMode !== "ReadWriteMany")
      problems.push(`recordings.accessMode "${String(accessMode)}" is not ReadWriteOnce or ReadWriteMany`);
    if (accessMode === "ReadWriteOnce" && (hpa || (args.replicas ?? 2) !== 1)) {
      problems.push(
        "recordings on a ReadWriteOnce volume need replicas: 1 and no autoscaling (one node mounts it); use accessMode ReadWriteMany for more replicas",
      );
    }
    if (
      recordings.retentionDays !== undefined &&
      (!Number.isInteger(recordings.retentionDays) || recordings.retentionDays < 0)
    )
      problems.push("recordings.retentionDays must be an integer >= 0");
  }
  const debug = args.debugContainers;
  if (debug) {
    const images = Array.isArray(debug.images) ? debug.images : [];
    if (images.length === 0)
      problems.push("debugContainers.images is empty: name the images a debug container may run");
    for (const image of images)
      if (!/^\S+$/.test(image)) problems.push(`debugContainers.images: "${image}" is not an image reference`);
    if (new Set(images).size !== images.length) problems.push("debugContainers.images has duplicates");
    if (debug.defaultImage !== undefined && !images.includes(debug.defaultImage))
      problems.push(`debugContainers.defaultImage "${debug.defaultImage}" is not one of debugContainers.images`);
    if (authorizer !== "kubernetes")
      problems.push(
        'debugContainers need authorizer "kubernetes" (a SubjectAccessReview for patch pods/ephemeralcontainers)',
      );
    if (args.settings?.maxSessionSeconds === 0)
      problems.push("debugContainers need settings.maxSessionSeconds > 0 (a debug container lives that long)");
  }
  problems.push(...caProblems(args));
  problems.push(...settingsProblems(args.settings));
  const exposure = args.exposure;
  if (exposure) {
    if (exposure.kind !== "istio" && exposure.kind !== "ingress")
      problems.push(`exposure.kind "${String(exposure.kind)}" is not istio or ingress`);
    if (!HOSTNAME.test(exposure.host ?? "")) problems.push(`exposure.host "${exposure.host}" is not a host name`);
    if (!exposure.tlsSecretName)
      problems.push("exposure.tlsSecretName is required: the gateway is exposed with TLS only");
  }
  return problems;
}

/**
 * PEM certificates, and nothing else: one or more BEGIN/END CERTIFICATE blocks (base64 lines
 * between them), whitespace around them (config.ts's caBundle pattern). A private key, or any
 * other PEM block, does not match.
 */
const PEM_CERTIFICATES = /^(\s*-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=]+\r?\n)+-----END CERTIFICATE-----)+\s*$/;

/** caBundle or existingCaConfigMap, never both; PEM certificates only (a private key is refused, not mounted). */
function caProblems({ caBundle, existingCaConfigMap: existing }: ExecGatewayArgs): string[] {
  const problems: string[] = [];
  if (caBundle !== undefined && existing !== undefined)
    problems.push("give caBundle or existingCaConfigMap, not both: the gateway reads one CA bundle");
  if (caBundle !== undefined && (typeof caBundle !== "string" || !PEM_CERTIFICATES.test(caBundle)))
    problems.push(
      "caBundle is not PEM certificates: one or more -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- blocks and nothing else (no private key)",
    );
  if (existing !== undefined) {
    if (!DNS_SUBDOMAIN.test(existing?.name ?? ""))
      problems.push(`existingCaConfigMap.name "${existing?.name}" is not a ConfigMap name`);
    if (!/^[-._a-zA-Z0-9]+$/.test(existing?.key ?? ""))
      problems.push(`existingCaConfigMap.key "${existing?.key}" is not a ConfigMap key`);
  }
  return problems;
}

const validateSettings = new Ajv({ allErrors: true, strict: false }).compile<ExecGatewaySettings>(settingsSchema);

/**
 * `settings` as the gateway will take them (it refuses anything else at start, and so would
 * crash-loop): known keys with values of their type and range (settings.schema.json, generated from
 * ExecGatewaySettings), then the gateway's cross-field rules, a setting left out at the gateway's
 * default. TypeScript's types check a TypeScript program only; a YAML or Python program, or a stack
 * config, reaches here with whatever it wrote.
 */
function settingsProblems(settings: ExecGatewaySettings | undefined): string[] {
  if (settings === undefined) return [];
  if (!validateSettings(settings)) return schemaProblems(validateSettings.errors, "settings");
  const defaults = settingsSchema.properties;
  const problems: string[] = [];
  const grace = settings.reapGraceSeconds ?? defaults.reapGraceSeconds.default;
  const reapTimeout = settings.reapTimeoutMs ?? defaults.reapTimeoutMs.default;
  if (reapTimeout <= grace * 1000)
    problems.push(
      `settings.reapTimeoutMs (${reapTimeout}) must be longer than settings.reapGraceSeconds (${grace}) x 1000: the reaper waits that long before SIGKILL`,
    );
  const low = settings.bufferLowBytes ?? defaults.bufferLowBytes.default;
  const high = settings.bufferHighBytes ?? defaults.bufferHighBytes.default;
  if (low > high) problems.push(`settings.bufferLowBytes (${low}) must not exceed settings.bufferHighBytes (${high})`);
  return problems;
}

/**
 * Throws every problem of the args at once, one line each naming the gateway: a ResourceError on
 * `resource` (the engine reports it against that resource), else a plain Error (the Stack checks
 * before it makes the gateway).
 * @internal
 */
export function validateExecGatewayArgs(name: string, args: ExecGatewayArgs, resource?: pulumi.Resource): void {
  throwProblems(name, execGatewayProblems(args), resource);
}

function throwProblems(name: string, problems: string[], resource: pulumi.Resource | undefined): void {
  if (problems.length === 0) return;
  const message = problems.map((problem) => `ExecGateway ${name}: ${problem}`).join("\n");
  throw resource ? new pulumi.ResourceError(message, resource) : new Error(message);
}

/** https, or plain http to a loopback address (the gateway's rule for its OIDC and webhook URLs). */
function isHttpsOrLoopback(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (
    parsed.protocol === "https:" ||
    (parsed.protocol === "http:" &&
      (parsed.hostname === "localhost" || parsed.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(parsed.hostname)))
  );
}

/**
 * The gateway's own namespace is never a target: exec there reaches the gateway's pods and their
 * service-account token (TokenReview and SubjectAccessReview cluster-wide), past the gateway's audit.
 */
function ownNamespaceProblems(namespace: string, targets: string[]): string[] {
  return targets.includes(namespace)
    ? [
        `targetNamespaces includes "${namespace}", the gateway's own namespace; run the targets in a namespace of their own`,
      ]
    : [];
}

const WEBHOOK_ONE_OF = 'authorizer "webhook" needs exactly one of webhook.url or webhook.urlSecret';
/** The gateway's own default (gateway/src/config.ts), set when the webhook is known only as an Output. */
const WEBHOOK_DEFAULT_TIMEOUT_MS = 3000;

/**
 * The webhook URL for the Secret the component writes. Pulumi's provider host hands an object
 * input that holds a secret (webhook.url from a Python or YAML program) over as one secret Output
 * of the whole object, whose fields are known only inside it; such a webhook must carry `url`.
 */
function webhookUrl(webhook: ExecGatewayWebhookArgs | pulumi.Output<ExecGatewayWebhookArgs>): pulumi.Input<string> {
  if (!pulumi.Output.isInstance(webhook)) return webhook.url!;
  return webhook.apply((value) => {
    if (value?.url === undefined || value.urlSecret !== undefined)
      throw new Error(`${WEBHOOK_ONE_OF}; from a secret object input, give url`);
    return pulumi.output(value.url);
  });
}

/**
 * The gateway's settings as one document, config.json in its ConfigMap (the gateway reads the file
 * ENTRYWAY_CONFIG names; gateway/src/config.ts refuses unknown keys and wrong types). Its keys are
 * the gateway's own: `settings` as given (ExecGatewaySettings has the gateway's names), the rest
 * from the args. Nothing secret goes in (the webhook URL, S3 credentials: gatewayEnv). The chart's
 * entryway.execGateway.config makes the same document, and helmToJson the same bytes.
 */
function execGatewayConfig(args: ExecGatewayArgs): Record<string, pulumi.Input<unknown>> {
  const authorizer = args.authorizer ?? "kubernetes";
  const config: Record<string, pulumi.Input<unknown>> = {
    host: "0.0.0.0",
    port: EXEC_GATEWAY_PORT,
    metricsPort: EXEC_GATEWAY_METRICS_PORT,
    backend: "kubernetes",
    authorizer,
  };
  if (args.refusedNamespaces?.length) config.refusedNamespaces = args.refusedNamespaces;
  if (authorizer === "webhook") {
    const webhook = args.webhook as ExecGatewayWebhookArgs | pulumi.Output<ExecGatewayWebhookArgs> | undefined;
    // A webhook from a secret object is known only inside it; its timeout is no secret.
    if (pulumi.Output.isInstance(webhook))
      config.webhookTimeoutMs = pulumi.unsecret(webhook.apply((w) => w.timeoutMs ?? WEBHOOK_DEFAULT_TIMEOUT_MS));
    else if (webhook?.timeoutMs !== undefined) config.webhookTimeoutMs = webhook.timeoutMs;
  }
  const oidc = authorizer === "oidc" ? args.oidc : undefined;
  if (oidc) {
    Object.assign(config, { oidcIssuer: oidc.issuer, oidcAudience: oidc.audience });
    if (oidc.jwksUri) config.oidcJwksUri = oidc.jwksUri;
    if (oidc.usernameClaim) config.oidcUsernameClaim = oidc.usernameClaim;
    if (oidc.namespacesClaim) config.oidcNamespacesClaim = oidc.namespacesClaim;
    if (oidc.groupsClaim) config.oidcGroupsClaim = oidc.groupsClaim;
    if (oidc.maxTokenAgeSeconds !== undefined) config.oidcMaxTokenAgeSeconds = oidc.maxTokenAgeSeconds;
    if (oidc.algorithms) config.oidcAlgorithms = oidc.algorithms;
  }
  const settings = args.settings ?? {};
  Object.assign(config, settings);
  // Behind the proxy exposure routes through, every client would otherwise have the proxy's address
  // and share one set of per-address limits. That proxy (an Istio ingress gateway, or ingress-nginx)
  // appends the address it saw to X-Forwarded-For (istio.io network-topologies; ingress-nginx
  // nginx.tmpl sets it to $remote_addr), so the client is the last address there.
  if (args.exposure && settings.trustedProxies === undefined && settings.trustedProxyHops === undefined)
    config.trustedProxyHops = EXPOSURE_PROXY_HOPS;
  // Browsers may open sessions only from the public host's pages unless told otherwise.
  if (args.exposure && settings.allowedOrigins === undefined) config.allowedOrigins = [`https://${args.exposure.host}`];
  const s3 = args.recordings?.s3;
  if (s3) {
    config.recordS3Bucket = s3.bucket;
    if (s3.endpoint) config.recordS3Endpoint = s3.endpoint;
    if (s3.region) config.recordS3Region = s3.region;
    if (s3.prefix) config.recordS3Prefix = s3.prefix;
    if (s3.forcePathStyle) config.recordS3ForcePathStyle = true;
  } else if (args.recordings) {
    Object.assign(config, {
      recordDir: EXEC_GATEWAY_RECORD_DIR,
      recordRetentionDays: args.recordings.retentionDays ?? 30,
    });
  }
  if (args.debugContainers) {
    config.debugImages = args.debugContainers.images;
    if (args.debugContainers.defaultImage) config.debugDefaultImage = args.debugContainers.defaultImage;
  }
  return config;
}

/**
 * The env a gateway pod gets (the chart's template makes the same list): where its settings
 * document is, its namespace from the downward API, and what is secret, from Secrets.
 */
function gatewayEnv(args: ExecGatewayArgs, webhookSecret: SecretKeyRef | undefined): k8s.types.input.core.v1.EnvVar[] {
  const env: k8s.types.input.core.v1.EnvVar[] = [
    { name: "ENTRYWAY_CONFIG", value: `${EXEC_GATEWAY_CONFIG_DIR}/${EXEC_GATEWAY_CONFIG_FILE}` },
    // The downward API: targets in the gateway's own namespace are refused at request time.
    { name: "ENTRYWAY_GATEWAY_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
  ];
  if (webhookSecret)
    env.push({
      name: "ENTRYWAY_WEBHOOK_URL",
      valueFrom: { secretKeyRef: { name: webhookSecret.name, key: webhookSecret.key } },
    });
  // The AWS SDK's default chain reads these; without the Secret the pod's identity takes their place.
  const credentials = args.recordings?.s3?.credentialsSecret;
  if (credentials) {
    for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
      env.push({ name: key, valueFrom: { secretKeyRef: { name: credentials, key } } });
  }
  return env;
}

/** The ConfigMap key the gateway's CA bundle comes from: the one made for caBundle, or existingCaConfigMap; none without either. */
function caSource(name: string, args: ExecGatewayArgs): ConfigMapKeyRef | undefined {
  if (args.caBundle !== undefined) return { name: objectName(name, "exec-gateway-ca"), key: EXEC_GATEWAY_CA_FILE };
  return args.existingCaConfigMap;
}

/** The egress port of an S3 endpoint that is not on 443 (an S3-compatible server in or near the cluster). */
function recordingsEgress(s3: ExecGatewayRecordingsS3Args | undefined): { port: number; protocol: string }[] {
  const port = s3?.endpoint ? Number(new URL(s3.endpoint).port || 443) : 443;
  return port === 443 || port === 6443 ? [] : [{ port, protocol: "TCP" }];
}

/**
 * The RBAC rules for entering pods: exec, and reading what a target resolves through (a workload
 * instance is found through ownership: a Deployment's ReplicaSets, then their pods).
 * pods/exec needs both `get` and `create`: the gateway's exec is a WebSocket upgrade, a GET, which the
 * API server authorizes as verb `get`, and since Kubernetes 1.35 it also checks `create` on the same
 * subresource (kubernetes pkg/registry/core/pod/rest/subresources.go, ExecREST.Connect, feature gate
 * AuthorizePodWebsocketUpgradeCreatePermission, beta and on by default from 1.35; kubernetes#133515).
 * With `create` alone the real API server answers 403 (test/real/kubernetes-authorizer.test.ts).
 * @internal
 */
export const EXEC_RULES = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/exec"], verbs: ["get", "create"] },
  { apiGroups: ["apps"], resources: ["deployments", "statefulsets"], verbs: ["get"] },
  { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["list"] },
];
/** Added to EXEC_RULES only with debugContainers: adding an ephemeral container (what kubectl debug patches). @internal */
export const DEBUG_RULE = { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] };
/** The Kubernetes authorizer's rules: TokenReview and SubjectAccessReview. @internal */
export const REVIEW_RULES = [
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** What every step of the constructor shares: the gateway's names, labels and namespace. */
interface GatewayObjects {
  /** The component's name: the prefix of every logical name. */
  name: string;
  args: ExecGatewayArgs;
  /** The objects' name (entryway.execGateway.fullname in the chart). */
  fullName: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  namespace: pulumi.Output<string>;
  metadata: (objectName: string) => { name: string; namespace: pulumi.Output<string>; labels: Record<string, string> };
  /** Where recordings go: the volume's claim, if any (the chart's entryway.execGateway.recordingsSink). */
  recordingsClaim: string | undefined;
}

/**
 * The constructor reads like the chart: one step per file of charts/entryway/templates/exec-gateway/
 * (serviceAccount, rbac, secret, configMap, service, pvc, caConfigMap, deployment, pdb, hpa, networkPolicy,
 * exposure), each a private method making that file's objects with the same logical names and
 * `parent: this`, so no URN depends on how the constructor is laid out.
 */
export class ExecGateway extends pulumi.ComponentResource {
  /** The namespace the gateway runs in. */
  public readonly namespace: pulumi.Output<string>;
  /** The gateway's Service name. */
  public readonly serviceName: pulumi.Output<string>;
  /** The in-cluster WebSocket URL (ws://<svc>.<ns>.svc.cluster.local/v1/enter). */
  public readonly internalUrl: pulumi.Output<string>;
  /** The public WebSocket URL (wss://<host>/v1/enter) when exposed, else the internal URL. */
  public readonly url: pulumi.Output<string>;
  /** The ServiceAccount the gateway runs as. */
  public readonly serviceAccountName: pulumi.Output<string>;
  /** The namespaces it may enter (empty with clusterWide). */
  public readonly targetNamespaces: pulumi.Output<string[]>;

  constructor(name: string, args: ExecGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:ExecGateway", name, {}, opts);
    validateExecGatewayArgs(name, args, this);
    // A namespace known only at deployment time is checked once it is known.
    if (typeof args.namespace !== "string") {
      pulumi
        .output(args.namespace)
        .apply((ns) => throwProblems(name, ownNamespaceProblems(ns, args.targetNamespaces ?? []), this));
    }
    const fullName = objectName(name, "exec-gateway");
    const identity = { name: "exec-gateway", instance: name, component: "server" };
    const labels = standardLabels(identity, args.labels);
    const namespace = pulumi.output(args.namespace);
    const gateway: GatewayObjects = {
      name,
      args,
      fullName,
      labels,
      selector: selectorLabels(identity),
      namespace,
      metadata: (objectNameValue) => ({ name: objectNameValue, namespace, labels }),
      // A volume only for the volume sink; the S3 sink needs none.
      recordingsClaim: args.recordings && !args.recordings.s3 ? objectName(name, "exec-gateway-recordings") : undefined,
    };

    const serviceAccount = this.serviceAccount(gateway);
    this.rbac(gateway);
    const webhookSecret = this.secret(gateway);
    const config = this.configMap(gateway);
    const service = this.service(gateway);
    this.pvc(gateway);
    const caConfigMap = this.caConfigMap(gateway);
    this.deployment(gateway, config, webhookSecret, caConfigMap);
    this.pdb(gateway);
    this.hpa(gateway);
    this.networkPolicy(gateway);
    this.exposure(gateway);

    this.namespace = namespace;
    this.serviceName = service.metadata.name;
    this.serviceAccountName = serviceAccount.metadata.name;
    this.internalUrl = namespace.apply((ns) => `ws://${serviceFqdn(fullName, ns)}${EXEC_GATEWAY_PATH}`);
    this.url = args.exposure ? pulumi.output(`wss://${args.exposure.host}${EXEC_GATEWAY_PATH}`) : this.internalUrl;
    this.targetNamespaces = pulumi.output(args.targetNamespaces ?? []);
    this.registerOutputs({
      namespace: this.namespace,
      serviceName: this.serviceName,
      serviceAccountName: this.serviceAccountName,
      internalUrl: this.internalUrl,
      url: this.url,
      targetNamespaces: this.targetNamespaces,
    });
  }

  /** serviceaccount.yaml: the identity the gateway execs with. */
  private serviceAccount({ name, args, fullName, metadata }: GatewayObjects): k8s.core.v1.ServiceAccount {
    return new k8s.core.v1.ServiceAccount(
      `${name}-exec-gateway`,
      {
        metadata: {
          ...metadata(fullName),
          ...(args.serviceAccountAnnotations ? { annotations: args.serviceAccountAnnotations } : {}),
        },
      },
      { parent: this },
    );
  }

  /**
   * rbac.yaml: exec rights as one Role + RoleBinding per namespace it may enter, a ClusterRole
   * only on request; debug containers' rule only when they are configured (least privilege); the
   * review rights of the kubernetes authorizer.
   */
  private rbac({ name, args, fullName, labels, namespace }: GatewayObjects): void {
    const subject = { kind: "ServiceAccount", name: fullName, namespace };
    const execRules = args.debugContainers ? [...EXEC_RULES, DEBUG_RULE] : EXEC_RULES;
    for (const target of args.targetNamespaces ?? []) {
      new k8s.rbac.v1.Role(
        `${name}-exec-gateway-${target}`,
        { metadata: { name: fullName, namespace: target, labels }, rules: execRules },
        { parent: this },
      );
      new k8s.rbac.v1.RoleBinding(
        `${name}-exec-gateway-${target}`,
        {
          metadata: { name: fullName, namespace: target, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: fullName },
          subjects: [subject],
        },
        { parent: this },
      );
    }
    // A cluster-scoped role and its binding to the gateway's ServiceAccount.
    const clusterRole = (part: string, rules: k8s.types.input.rbac.v1.PolicyRule[]) => {
      const clusterName = namespace.apply((ns) => objectName(name, ns, part));
      new k8s.rbac.v1.ClusterRole(
        `${name}-${part}`,
        { metadata: { name: clusterName, labels }, rules },
        { parent: this },
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        `${name}-${part}`,
        {
          metadata: { name: clusterName, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
          subjects: [subject],
        },
        { parent: this },
      );
    };
    if (args.clusterWide) clusterRole("exec-gateway-exec", execRules);
    if ((args.authorizer ?? "kubernetes") === "kubernetes") clusterRole("exec-gateway-review", REVIEW_RULES);
  }

  /** secret.yaml: the webhook URL may hold a credential, so it lives in a Secret, never in the pod spec or the ConfigMap. */
  private secret({ name, args, metadata }: GatewayObjects): SecretKeyRef | undefined {
    if (args.authorizer !== "webhook") return undefined;
    if (!pulumi.Output.isInstance(args.webhook) && args.webhook?.urlSecret) return args.webhook.urlSecret;
    const webhookSecret = { name: objectName(name, "exec-gateway-auth"), key: "webhook-url" };
    new k8s.core.v1.Secret(
      `${name}-exec-gateway-auth`,
      {
        metadata: metadata(webhookSecret.name),
        type: "Opaque",
        stringData: { "webhook-url": pulumi.secret(webhookUrl(args.webhook!)) },
      },
      { parent: this },
    );
    return webhookSecret;
  }

  /** configmap.yaml: the settings document (execGatewayConfig), in the chart's bytes. */
  private configMap({ name, args, fullName, metadata }: GatewayObjects): {
    document: pulumi.Output<string>;
    configMap: k8s.core.v1.ConfigMap;
  } {
    const document = pulumi.output(execGatewayConfig(args)).apply(helmToJson);
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-exec-gateway`,
      { metadata: metadata(fullName), data: { [EXEC_GATEWAY_CONFIG_FILE]: document } },
      { parent: this },
    );
    return { document, configMap };
  }

  /** ca-configmap.yaml: the CA bundle given as caBundle (an existingCaConfigMap is the user's). */
  private caConfigMap({ name, args, metadata }: GatewayObjects): k8s.core.v1.ConfigMap | undefined {
    if (args.caBundle === undefined) return undefined;
    return new k8s.core.v1.ConfigMap(
      `${name}-exec-gateway-ca`,
      { metadata: metadata(objectName(name, "exec-gateway-ca")), data: { [EXEC_GATEWAY_CA_FILE]: args.caBundle } },
      { parent: this },
    );
  }

  /** service.yaml: the public port and the metrics port, in-cluster. */
  private service({ name, fullName, selector, metadata }: GatewayObjects): k8s.core.v1.Service {
    return new k8s.core.v1.Service(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          type: "ClusterIP",
          selector,
          ports: [
            { name: "http", port: 80, targetPort: "http", protocol: "TCP", appProtocol: "http" },
            {
              name: "metrics",
              port: EXEC_GATEWAY_METRICS_PORT,
              targetPort: "metrics",
              protocol: "TCP",
              appProtocol: "http",
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /** pvc.yaml: the recordings volume, for the volume sink only. */
  private pvc({ name, args, metadata, recordingsClaim }: GatewayObjects): void {
    const recordings = args.recordings;
    if (!recordings || !recordingsClaim) return;
    new k8s.core.v1.PersistentVolumeClaim(
      `${name}-exec-gateway-recordings`,
      {
        metadata: metadata(recordingsClaim),
        spec: {
          accessModes: [recordings.accessMode ?? "ReadWriteOnce"],
          ...(recordings.storageClassName ? { storageClassName: recordings.storageClassName } : {}),
          resources: { requests: { storage: recordings.size ?? "10Gi" } },
        },
      },
      { parent: this },
    );
  }

  /**
   * deployment.yaml: the gateway's pods, its settings document mounted read-only (a change of it
   * rolls them: checksum/config), its secrets from Secrets.
   */
  private deployment(
    { name, args, fullName, labels, selector, metadata, recordingsClaim }: GatewayObjects,
    config: { document: pulumi.Output<string>; configMap: k8s.core.v1.ConfigMap },
    webhookSecret: SecretKeyRef | undefined,
    caConfigMap: k8s.core.v1.ConfigMap | undefined,
  ): void {
    const ca = caSource(name, args);
    const singleNodeVolume =
      recordingsClaim !== undefined && (args.recordings?.accessMode ?? "ReadWriteOnce") === "ReadWriteOnce";
    new k8s.apps.v1.Deployment(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          ...(args.autoscaling ? {} : { replicas: args.replicas ?? 2 }),
          selector: { matchLabels: selector },
          // One pod at a time holds a ReadWriteOnce recordings volume (see ExecGatewayRecordingsArgs).
          strategy: singleNodeVolume
            ? { type: "Recreate" }
            : { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
          template: {
            // The gateway reads its settings and its CA bundle once, at start.
            metadata: podMetadata(
              labels,
              args,
              config.document.apply(
                (document) => configChecksums({ config: document, "ca-bundle": args.caBundle }).annotations ?? {},
              ),
            ),
            spec: {
              serviceAccountName: fullName,
              automountServiceAccountToken: true,
              securityContext: restrictedPodSecurityContext({ user: args.runAsUser ?? 1000 }),
              // The gateway drains open sessions for up to drainTimeoutMs (10 s) on SIGTERM.
              terminationGracePeriodSeconds: 30,
              // Replicas on different nodes where possible: a node's loss drops only its sessions.
              ...podPlacement(args, args.global, [
                {
                  maxSkew: 1,
                  topologyKey: "kubernetes.io/hostname",
                  whenUnsatisfiable: "ScheduleAnyway",
                  labelSelector: { matchLabels: selector },
                },
              ]),
              containers: [
                {
                  name: "gateway",
                  image: imageReference(EXEC_GATEWAY_IMAGE, args.image, args.global),
                  imagePullPolicy: "IfNotPresent",
                  args: ["serve"],
                  ports: [
                    { name: "http", containerPort: EXEC_GATEWAY_PORT, protocol: "TCP" },
                    { name: "metrics", containerPort: EXEC_GATEWAY_METRICS_PORT, protocol: "TCP" },
                  ],
                  env: [
                    ...gatewayEnv(args, webhookSecret),
                    // Node reads it at start: the public roots plus these (nodejs doc/api/cli.md,
                    // NODE_EXTRA_CA_CERTS), for https.request (the S3 client) and fetch alike.
                    ...(ca
                      ? [{ name: "NODE_EXTRA_CA_CERTS", value: `${EXEC_GATEWAY_CA_DIR}/${EXEC_GATEWAY_CA_FILE}` }]
                      : []),
                  ],
                  // The kubelet probes from the node, which a NetworkPolicy always lets through
                  // (kubernetes/website content/en/docs/concepts/services-networking/network-policies.md).
                  livenessProbe: {
                    httpGet: { path: "/healthz", port: "http" },
                    periodSeconds: 10,
                    timeoutSeconds: 2,
                    failureThreshold: 3,
                  },
                  readinessProbe: {
                    httpGet: { path: "/readyz", port: "metrics" },
                    periodSeconds: 5,
                    timeoutSeconds: 3,
                    failureThreshold: 2,
                  },
                  resources: args.resources ?? DEFAULT_RESOURCES,
                  securityContext: restrictedContainerSecurityContext(),
                  volumeMounts: [
                    { name: "tmp", mountPath: "/tmp" },
                    { name: "config", mountPath: EXEC_GATEWAY_CONFIG_DIR, readOnly: true },
                    ...(recordingsClaim ? [{ name: "recordings", mountPath: EXEC_GATEWAY_RECORD_DIR }] : []),
                    ...(ca ? [{ name: "ca", mountPath: EXEC_GATEWAY_CA_DIR, readOnly: true }] : []),
                  ],
                },
              ],
              volumes: [
                { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
                { name: "config", configMap: { name: fullName } },
                ...(recordingsClaim
                  ? [{ name: "recordings", persistentVolumeClaim: { claimName: recordingsClaim } }]
                  : []),
                // Only the bundle's key, as EXEC_GATEWAY_CA_FILE, whatever the existing ConfigMap calls it.
                ...(ca
                  ? [{ name: "ca", configMap: { name: ca.name, items: [{ key: ca.key, path: EXEC_GATEWAY_CA_FILE }] } }]
                  : []),
              ],
            },
          },
        },
      },
      // New pods read the document once, at start: it is written before the Deployment rolls them.
      { parent: this, dependsOn: caConfigMap ? [config.configMap, caConfigMap] : [config.configMap] },
    );
  }

  /** pdb.yaml: one pod down at a time. */
  private pdb({ name, fullName, selector, metadata }: GatewayObjects): void {
    new k8s.policy.v1.PodDisruptionBudget(
      `${name}-exec-gateway`,
      { metadata: metadata(fullName), spec: { maxUnavailable: 1, selector: { matchLabels: selector } } },
      { parent: this },
    );
  }

  /** hpa.yaml: CPU autoscaling, only when asked for. */
  private hpa({ name, args, fullName, metadata }: GatewayObjects): void {
    if (!args.autoscaling) return;
    new k8s.autoscaling.v2.HorizontalPodAutoscaler(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: fullName },
          minReplicas: args.autoscaling.minReplicas,
          maxReplicas: args.autoscaling.maxReplicas,
          metrics: [
            {
              type: "Resource",
              resource: {
                name: "cpu",
                target: {
                  type: "Utilization",
                  averageUtilization: args.autoscaling.targetCPUUtilizationPercentage ?? 70,
                },
              },
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /**
   * networkpolicy.yaml. In: the gateway port only from the ingress side, the metrics port only from
   * the monitoring namespace. Out: DNS, and HTTPS to the API server / webhook / OIDC issuer / S3.
   */
  private networkPolicy({ name, args, fullName, selector, metadata }: GatewayObjects): void {
    const ingressNamespace = args.ingressNamespace ?? "istio-system";
    const monitoringNamespace = args.monitoringNamespace ?? "monitoring";
    new k8s.networking.v1.NetworkPolicy(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          podSelector: { matchLabels: selector },
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            {
              from: args.allowFrom ?? [
                { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ingressNamespace } } },
              ],
              ports: [{ port: "http", protocol: "TCP" }],
            },
            {
              from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": monitoringNamespace } } }],
              ports: [{ port: "metrics", protocol: "TCP" }],
            },
          ],
          egress: [
            dnsEgressRule(args.dns),
            {
              ports: [
                { port: 443, protocol: "TCP" },
                { port: 6443, protocol: "TCP" },
                ...recordingsEgress(args.recordings?.s3),
              ],
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /** exposure.yaml: the public paths through an Istio Gateway and VirtualService, or an Ingress, with TLS. */
  private exposure({ name, args, fullName, metadata, namespace }: GatewayObjects): void {
    const exposure = args.exposure;
    const publicPaths = [...EXEC_GATEWAY_PUBLIC_PATHS, ...(args.recordings ? EXEC_GATEWAY_RECORDING_PATHS : [])];
    if (exposure?.kind === "istio") {
      new k8s.apiextensions.CustomResource(
        `${name}-exec-gateway-gw`,
        {
          apiVersion: "networking.istio.io/v1",
          kind: "Gateway",
          metadata: metadata(fullName),
          spec: {
            selector: exposure.istioSelector ?? { istio: "ingressgateway" },
            servers: [
              {
                port: { number: 443, name: "https-exec-gateway", protocol: "HTTPS" },
                hosts: [exposure.host],
                tls: { mode: "SIMPLE", credentialName: exposure.tlsSecretName, minProtocolVersion: "TLSV1_2" },
              },
            ],
          },
        },
        { parent: this },
      );
      new k8s.apiextensions.CustomResource(
        `${name}-exec-gateway-vs`,
        {
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          metadata: metadata(fullName),
          spec: {
            hosts: [exposure.host],
            gateways: [fullName],
            http: [
              {
                name: "exec-gateway",
                match: publicPaths.map(({ path, match }) => ({ uri: { [match]: path } })),
                route: [
                  { destination: { host: namespace.apply((ns) => serviceFqdn(fullName, ns)), port: { number: 80 } } },
                ],
                // Shell sessions are long-lived WebSockets: no route timeout, which is istiod's default
                // when `timeout` is absent (pilot/pkg/networking/core/route/route.go, setTimeout:
                // Notimeout, 0s). `timeout: 0s` itself is refused by Istio's validation
                // (pkg/config/validation/virtualservice.go with agent.ValidateDuration: "duration
                // must be greater than 1ms"), so the webhook would reject the VirtualService.
              },
            ],
          },
        },
        { parent: this },
      );
    } else if (exposure?.kind === "ingress") {
      new k8s.networking.v1.Ingress(
        `${name}-exec-gateway`,
        {
          metadata: { ...metadata(fullName), ...(exposure.annotations ? { annotations: exposure.annotations } : {}) },
          spec: {
            ...(exposure.ingressClassName ? { ingressClassName: exposure.ingressClassName } : {}),
            tls: [{ hosts: [exposure.host], secretName: exposure.tlsSecretName }],
            rules: [
              {
                host: exposure.host,
                http: {
                  paths: publicPaths.map(({ path, match }) => ({
                    path,
                    pathType: match === "exact" ? "Exact" : "Prefix",
                    backend: { service: { name: fullName, port: { name: "http" } } },
                  })),
                },
              },
            ],
          },
        },
        { parent: this },
      );
    }
  }
}
