// The public types of AnsibleForms: its RTE mode and the interfaces of its args.
import type * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings, ImageSettings } from "../shared/image";
import type { InClusterPeer, NetworkPolicyEgressRule, NetworkPolicyPeer } from "../shared/network";
import type { PodSettings } from "../shared/pod";
import type { SecretKeyRef } from "../shared/secret";
import type { MetricsSettings } from "./common";
import type { SeedRunner } from "./runner-seed";
import type { SidecarRteSettings } from "./sidecar-rte";
import type { ValueOf } from "../shared/enum";

/**
 * Where the app's RTE runs. An `as const` object with a type of the same name: TypeScript takes
 * the plain strings, Pulumi's component analyzer reads it as an enum (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, extractEnumMembers).
 */
export const AnsibleFormsRteMode = {
  /** An inbound RTE in the app pod (the default). */
  Sidecar: "sidecar",
  /** None in the pod: an outbound RemoteRte dials the app. */
  Remote: "remote",
  /** The deprecated 7.0-7.2 RTE in the app pod. */
  Database: "database",
} as const;
export type AnsibleFormsRteMode = ValueOf<typeof AnsibleFormsRteMode>;

/** The app's RTE. */
export interface AnsibleFormsRteSettings extends SidecarRteSettings {
  /**
   * "sidecar": an inbound RTE in the app pod (default); "remote": none in the pod, an outbound
   * RemoteRte dials the app; "database": the deprecated 7.0-7.2 RTE in the app pod.
   */
  mode?: AnsibleFormsRteMode;
  /** The seeded runner's name (default "rte" for a sidecar, "remote" for an outbound RTE). */
  runnerName?: string;
  /** Whether the seeded runner is the default runner (default true). */
  isDefault?: boolean;
}

/** An external MySQL/MariaDB instead of the built-in MySQL. */
export interface ExternalDatabase {
  /** Host name. */
  host: string;
  /**
   * Port (default 3306).
   * @minimum 1
   * @maximum 65535
   * @asType integer
   */
  port?: number;
  /** User name. */
  user: string;
  /** The password, in an existing Secret. */
  passwordSecret: SecretKeyRef;
}

/** Metrics of the app and its sidecar RTE: each with a token of its own. */
export interface AnsibleFormsMetricsSettings extends MetricsSettings {
  /**
   * An existing Secret (key token) with the sidecar RTE's own METRICS_TOKEN, never the app's Secret (default: generated).
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  rteExistingSecret?: string;
}

/** An app environment variable from a Secret. */
export interface SecretEnvVar {
  /**
   * The variable's name, e.g. AWX_TOKEN.
   * @pattern ^[A-Za-z_][A-Za-z0-9_]*$
   */
  name: string;
  /**
   * The Secret holding it.
   * @minLength 1
   */
  secretName: string;
  /**
   * Its key in the Secret.
   * @minLength 1
   */
  key: string;
}

/** The built-in MySQL: its image, volume and pod placement. */
export interface MysqlSettings extends PodSettings {
  /** The image (default registry docker.io, repository library/mysql, tag 8.4); a digest wins over the tag. */
  image?: ImageSettings;
  /**
   * Its volume's size (default 8Gi).
   * @pattern ^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti)$
   */
  size?: string;
}

/** Existing Secrets instead of generated ones (their keys: docs/ansibleforms.md, "Secrets"). */
export interface AnsibleFormsExistingSecrets {
  /**
   * Keys encryption-secret (32 characters), access-token-secret, admin-password.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  keys?: string;
  /**
   * Keys password and root-password, for the built-in MySQL.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  database?: string;
  /**
   * Key token (at least 16 characters): the RTE token shared by the app and its RTEs.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  rteToken?: string;
}

/** More runners for the seed, and prune. */
export interface AnsibleFormsRunners {
  /** Delete seeded runners no longer declared (default false). */
  prune?: boolean;
  /** Runners besides the RTE's own. */
  items?: SeedRunner[];
}

/** An Ingress for the app. */
export interface AnsibleFormsExpose {
  /** The host name. */
  host: string;
  /** The IngressClass. */
  ingressClassName?: string;
  /** A TLS Secret for the host. */
  tlsSecretName?: string;
  /**
   * Annotations on the Ingress: its controller's settings, or `pulumi.com/skipAwait: "true"` where
   * no controller will report an address (Pulumi otherwise waits for one).
   */
  annotations?: Record<string, string>;
  /**
   * PEM CA bundle that signed the host's certificate: not deployed here, passed on as the
   * output `caBundle` (stack output `ansibleFormsCaBundle`) for outbound RTEs elsewhere to trust.
   */
  caBundle?: string;
}

/**
 * The settings AnsibleFormsSettings (the stack config) and AnsibleFormsArgs share: all but the
 * RTE token, a plain string in config and an Input in args. A base interface, not Omit<>: Pulumi's
 * component analyzer loses the types and doc comments of a mapped type's properties.
 */
export interface AnsibleFormsBaseSettings extends PodSettings {
  /**
   * The app image (default registry ghcr.io, repository ansibleforms/ansibleforms, tag 7.3.0; the
   * RTE uses the same tag unless told otherwise); a digest wins over the tag.
   */
  image?: ImageSettings;
  /**
   * ADMIN_USERNAME (default "admin"); its password is generated, never the default one.
   * @minLength 1
   */
  adminUsername?: string;
  /**
   * Size of the app's volume for /app/dist/persistent (default 5Gi).
   * @pattern ^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti)$
   */
  persistentSize?: string;
  /** StorageClass of the app's and MySQL's volumes (default: the cluster's default). */
  storageClassName?: string;
  /**
   * CONFIG_SEED_RELOAD_SECONDS (default 60).
   * @minimum 0
   * @asType integer
   */
  seedReloadSeconds?: number;
  /**
   * RTE_QUEUE_MINUTES: how long a job waits for a full or absent RTE (default 60).
   * @minimum 1
   * @asType integer
   */
  queueMinutes?: number;
  /** Existing Secrets instead of generated ones (their keys: docs/ansibleforms.md, "Secrets"). */
  existingSecrets?: AnsibleFormsExistingSecrets;
  /** The built-in MySQL 8.4 (ignored with an external database). */
  mysql?: MysqlSettings;
  /** An external database: then no MySQL is deployed. */
  externalDatabase?: ExternalDatabase;
  /** The RTE. */
  rte?: AnsibleFormsRteSettings;
  /** More runners for the seed (awx runners, more outbound RTEs), and prune. */
  runners?: AnsibleFormsRunners;
  /** More app environment variables from Secrets, e.g. an AWX token the seed references as ${AWX_TOKEN}. */
  secretEnv?: SecretEnvVar[];
  /**
   * NetworkPolicy peers (namespaceSelector, podSelector, ipBlock) allowed to reach the app's
   * port; default: only the ingressNamespace. List your ingress controller and any in-cluster
   * outbound RTE.
   */
  allowFrom?: NetworkPolicyPeer[];
  /**
   * The namespace of the ingress controller that reaches the app when allowFrom is empty
   * (default ingress-nginx).
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  ingressNamespace?: string;
  /**
   * Where the app's pod may connect besides DNS and its database: AWX runners, LDAP, mail, git,
   * and, with an RTE in the pod (sidecar or database mode), the hosts its playbooks manage.
   * Default: nowhere else.
   */
  allowEgressTo?: NetworkPolicyEgressRule[];
  /** Prometheus scraping of the app and its sidecar RTE (off by default). */
  metrics?: AnsibleFormsMetricsSettings;
  /** An Ingress for the app (an outbound RTE in another network needs one). */
  expose?: AnsibleFormsExpose;
}

/** The settings of AnsibleForms: plain values, known at preview (they shape the objects). */
export interface AnsibleFormsSettings extends AnsibleFormsBaseSettings {
  /**
   * The RTE token (at least 16 characters), when it must be a known value (e.g. shared with a
   * RemoteRte in another stack); set it as a secret. Default: generated.
   */
  rteToken?: string;
}

/** The arguments of AnsibleForms. */
export interface AnsibleFormsArgs extends AnsibleFormsBaseSettings {
  /** The RTE token (at least 16 characters); default generated. Pass a secret. */
  rteToken?: pulumi.Input<string>;
  /** The namespace everything goes in. */
  namespace: pulumi.Input<string>;
  /** Labels added to every object. */
  labels?: Record<string, string>;
  /** The global image registry (a mirror) and pull secrets. */
  global?: GlobalSettings;
  /** The cluster DNS its pods may ask (default: kube-dns in kube-system; the Stack passes networkPolicy.dns). */
  dns?: InClusterPeer;
}
