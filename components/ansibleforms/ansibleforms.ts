/**
 * AnsibleForms: the app (one writer: Recreate), its persistent volume, MySQL 8.4 unless an
 * external database is given, its secrets (generated with @pulumi/random unless existing Secrets
 * are named), the runner seed, and its RTE: an inbound sidecar, none in the pod (an outbound
 * RemoteRte elsewhere dials in), or the deprecated database-mode sidecar.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { standardLabels, selectorLabels } from "../shared/labels";
import { imageReference, type GlobalSettings, type ImageSettings } from "../shared/image";
import { objectName, statefulSetName } from "../shared/names";
import {
  dnsEgressRule,
  type InClusterPeer,
  type NetworkPolicyEgressRule,
  type NetworkPolicyPeer,
} from "../shared/network";
import { podMetadata, podPlacement, type PodSettings } from "../shared/pod";
import type { SecretKeyRef } from "../shared/secret";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import {
  APP_IMAGE,
  APP_PORT,
  checkedToken,
  COMPONENT_APP_ENV,
  configChecksums,
  DATABASE_SCHEMA,
  DEFAULT_TAG,
  bearerFrom,
  hostPortEgress,
  monitoringPeer,
  ANSIBLEFORMS_SECRET_KEYS,
  MYSQL_IMAGE,
  MYSQL_PORT,
  MYSQL_UID,
  NODE_UID,
  PERSISTENT_PATH,
  SEED_DIR,
  SEED_PATH,
  SIDECAR_RTE_PORT,
  SSH_PATH,
  APP_SSH_SUBPATH,
  rteSettingsProblems,
  secretEnv,
  secretsReadBy,
  terminationGraceSeconds,
  tokenProblems,
  type MetricsSettings,
  type RteContainerSpec,
} from "./common";
import { DATABASE_MODE_WARNING, DEPRECATION_ANNOTATION, databaseModeSidecar } from "./database-rte";
import { RunnerSeed, seedProblemLines, type Runner, type SeedRunner, type SeedSpec } from "./runner-seed";
import { inboundRunnerUri, inboundSidecar, type SidecarRteSettings } from "./sidecar-rte";
import type { ValueOf } from "../shared/enum";

type EnvVar = k8s.types.input.core.v1.EnvVar;
type Volume = k8s.types.input.core.v1.Volume;

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

const RESERVED_ENV = new Set<string>(COMPONENT_APP_ENV);

/** Every input mistake in the settings alone, one line each naming `where`. */
function settingsProblems(args: AnsibleFormsArgs, where: string): string[] {
  const problems: string[] = [];
  const mode = args.rte?.mode ?? "sidecar";
  if (!["sidecar", "remote", "database"].includes(mode)) {
    problems.push(`rte.mode ${JSON.stringify(mode)} is unknown (sidecar, remote or database)`);
  }
  const port = args.rte?.port ?? SIDECAR_RTE_PORT;
  if (mode !== "remote" && port === APP_PORT) {
    problems.push(`rte.port ${port} is the app's port: the sidecar shares the pod's network, its port must differ`);
  }
  if (mode === "remote" && args.rte?.files === "local") {
    problems.push(`rte.files "local" needs the app's disk; an outbound RTE elsewhere cannot share it (use "transfer")`);
  }
  for (const env of args.secretEnv ?? []) {
    if (RESERVED_ENV.has(env.name)) problems.push(`secretEnv ${env.name} is set by the component`);
  }
  if (args.rte?.sshFromApp && args.rte.sshSecret) {
    problems.push("rte: give sshFromApp or sshSecret, not both");
  }
  if (args.rte?.sshFromApp && mode === "remote") {
    problems.push(
      "rte.sshFromApp needs the app's disk; an outbound RTE elsewhere cannot share it (use its own sshSecret)",
    );
  }
  const metrics = args.metrics;
  if (metrics?.enabled && metrics.existingSecret && metrics.existingSecret === metrics.rteExistingSecret) {
    problems.push(
      "metrics: the RTE's METRICS_TOKEN must come from a Secret of its own (rteExistingSecret differs from existingSecret)",
    );
  }
  if (args.externalDatabase && args.existingSecrets?.database) {
    problems.push(`existingSecrets.database is for the built-in MySQL; an external database names its passwordSecret`);
  }
  return [
    ...problems.map((problem) => `${where}: ${problem}`),
    ...rteSettingsProblems(args.rte ?? {}, where),
    ...(args.existingSecrets?.rteToken ? [] : tokenProblems(args.rteToken, where)),
  ];
}

type Identity = { name: string; instance: string; component: string };

/**
 * What every step shares, worked out before any object is made: the names and labels the chart's
 * templates/ansibleforms/_helpers.tpl defines, the database, the app's environment and the seed,
 * and the RTE container in the pod. Pure, so that every problem is known before the first object.
 */
interface Plan {
  readonly name: string;
  readonly args: AnsibleFormsArgs;
  readonly rte: AnsibleFormsRteSettings;
  readonly mode: AnsibleFormsRteMode;
  readonly ns: pulumi.Input<string>;
  readonly tag: string;
  readonly appName: string;
  readonly mysqlName: string;
  readonly appIdentity: Identity;
  readonly mysqlIdentity: Identity;
  readonly labels: Record<string, string>;
  readonly mysqlLabels: Record<string, string>;
  /** The Secrets: existing ones by name, else the ones config() generates. */
  readonly keysSecret: string;
  readonly tokenSecret: string;
  readonly dbSecret?: string;
  /** Metrics when on, with the app's METRICS_TOKEN Secret and the sidecar RTE's own. */
  readonly metrics?: AnsibleFormsMetricsSettings;
  readonly appMetricsSecret?: string;
  readonly rteMetricsSecret?: string;
  readonly db: { host: string; port: number; user: string; password: SecretKeyRef };
  readonly databaseEnv: EnvVar[];
  readonly appEnv: EnvVar[];
  readonly seed: SeedSpec;
  readonly rtePort: number;
  readonly ansibleCfgConfigMap?: string;
  /** The RTE container in the app pod (sidecar or database mode). */
  readonly sidecar?: RteContainerSpec;
}

function plan(name: string, args: AnsibleFormsArgs): Plan {
  const rte = args.rte ?? {};
  const mode: AnsibleFormsRteMode = rte.mode ?? "sidecar";
  const tag = args.image?.tag || DEFAULT_TAG;
  const mysqlName = statefulSetName(name, "ansibleforms-mysql");
  const appIdentity = { name: "ansibleforms", instance: name, component: "server" };
  const mysqlIdentity = { name: "ansibleforms", instance: name, component: "database" };
  const keysSecret = args.existingSecrets?.keys || objectName(name, "ansibleforms-keys");
  const tokenSecret = args.existingSecrets?.rteToken || objectName(name, "ansibleforms-rte-token");
  // Metrics: the app's token, and the sidecar RTE's own (never the app's: docs/ansibleforms.md, "Metrics").
  const metrics = args.metrics?.enabled ? args.metrics : undefined;
  const appMetricsSecret = metrics && (metrics.existingSecret || objectName(name, "ansibleforms-metrics"));
  const rteMetricsSecret =
    metrics && mode === "sidecar"
      ? metrics.rteExistingSecret || objectName(name, "ansibleforms-rte-metrics")
      : undefined;

  // The database: external, or MySQL 8.4 that only the app may reach.
  const external = args.externalDatabase;
  const dbSecret = external ? undefined : (args.existingSecrets?.database ?? objectName(name, "ansibleforms-db"));
  const db = external
    ? { host: external.host, port: external.port ?? MYSQL_PORT, user: external.user, password: external.passwordSecret }
    : {
        host: mysqlName,
        port: MYSQL_PORT,
        user: "ansibleforms",
        password: { name: dbSecret!, key: ANSIBLEFORMS_SECRET_KEYS.dbPassword },
      };

  // The app's environment; the seed may reference exactly these names.
  const databaseEnv: EnvVar[] = [
    { name: "DB_HOST", value: db.host },
    { name: "DB_PORT", value: String(db.port) },
    { name: "DB_USER", value: db.user },
    secretEnv("DB_PASSWORD", db.password),
  ];
  const appEnv: EnvVar[] = [
    { name: "PORT", value: String(APP_PORT) },
    ...databaseEnv,
    secretEnv("ENCRYPTION_SECRET", { name: keysSecret, key: ANSIBLEFORMS_SECRET_KEYS.encryptionSecret }),
    secretEnv("ACCESS_TOKEN_SECRET", { name: keysSecret, key: ANSIBLEFORMS_SECRET_KEYS.accessTokenSecret }),
    { name: "ADMIN_USERNAME", value: args.adminUsername ?? "admin" },
    secretEnv("ADMIN_PASSWORD", { name: keysSecret, key: ANSIBLEFORMS_SECRET_KEYS.adminPassword }),
    secretEnv("RTE_TOKEN", { name: tokenSecret, key: ANSIBLEFORMS_SECRET_KEYS.rteToken }),
    { name: "RTE_QUEUE_MINUTES", value: String(args.queueMinutes ?? 60) },
    { name: "CONFIG_SEED_PATH", value: SEED_PATH },
    { name: "CONFIG_SEED_RELOAD_SECONDS", value: String(args.seedReloadSeconds ?? 60) },
    ...(appMetricsSecret
      ? [secretEnv("METRICS_TOKEN", { name: appMetricsSecret, key: ANSIBLEFORMS_SECRET_KEYS.metricsToken })]
      : []),
    ...(args.secretEnv ?? []).map((e) => secretEnv(e.name, { name: e.secretName, key: e.key })),
  ];

  // The seed: the RTE's own runner first, then the others.
  const rtePort = rte.port ?? SIDECAR_RTE_PORT;
  const ownRunner: Runner =
    mode === "remote"
      ? {
          name: rte.runnerName ?? "remote",
          type: "rte",
          mode: "outbound",
          token: "${RTE_TOKEN}",
          is_default: rte.isDefault ?? true,
        }
      : {
          name: rte.runnerName ?? "rte",
          type: "rte",
          ...(mode === "sidecar" ? { mode: "inbound" as const } : {}),
          uri: inboundRunnerUri(rtePort),
          token: "${RTE_TOKEN}",
          is_default: rte.isDefault ?? true,
        };
  const seed: SeedSpec = { prune: args.runners?.prune, runners: [ownRunner, ...(args.runners?.items ?? [])] };

  // The RTE in the app pod, with its ansible.cfg when given (none with an outbound RTE elsewhere).
  const ansibleCfgConfigMap =
    mode !== "remote" && rte.ansibleCfg ? objectName(name, "ansibleforms-rte-ansible-cfg") : undefined;
  const token = { name: tokenSecret, key: ANSIBLEFORMS_SECRET_KEYS.rteToken };
  const sidecar =
    mode === "sidecar"
      ? inboundSidecar({
          settings: rte,
          port: rtePort,
          defaultTag: tag,
          global: args.global,
          token,
          metricsSecret: rteMetricsSecret,
          ansibleCfgConfigMap,
          persistentVolume: "persistent",
          appSecrets: secretsReadBy(appEnv),
        })
      : mode === "database"
        ? databaseModeSidecar({
            settings: rte,
            port: rtePort,
            defaultTag: tag,
            global: args.global,
            token,
            ansibleCfgConfigMap,
            persistentVolume: "persistent",
            appSecrets: secretsReadBy(appEnv),
            databaseEnv,
          })
        : undefined;

  return {
    name,
    args,
    rte,
    mode,
    ns: args.namespace,
    tag,
    appName: objectName(name, "ansibleforms"),
    mysqlName,
    appIdentity,
    mysqlIdentity,
    labels: standardLabels({ ...appIdentity, version: tag }, args.labels),
    mysqlLabels: standardLabels({ ...mysqlIdentity, version: "8.4" }, args.labels),
    keysSecret,
    tokenSecret,
    dbSecret,
    metrics,
    appMetricsSecret,
    rteMetricsSecret,
    db,
    databaseEnv,
    appEnv,
    seed,
    rtePort,
    ansibleCfgConfigMap,
    sidecar,
  };
}

// AnsibleForms, made in the steps the chart's templates/ansibleforms/ files are: config (the
// Secrets), mysql, seed-configmap, storage, the RTE in the pod, deployment, service (Service and
// NetworkPolicy), monitoring and the Ingress. Every problem in the settings is reported at once,
// before any object is made.
export class AnsibleForms extends pulumi.ComponentResource {
  /** The app's Service. */
  public readonly serviceName: pulumi.Output<string>;
  /** The app's in-cluster URL. */
  public readonly url: pulumi.Output<string>;
  /** The Secret (key "token") holding the RTE token the app and its RTEs share. */
  public readonly rteTokenSecretName: pulumi.Output<string>;
  /** The RTE token, when generated here (secret). */
  public readonly rteToken?: pulumi.Output<string>;
  /** The CA bundle outbound RTEs trust the app's certificate with (expose.caBundle), when given. */
  public readonly caBundle?: string;
  /** The admin password, when generated here (secret). */
  public readonly adminPassword?: pulumi.Output<string>;
  /** The seed file's text. */
  public readonly seed: string;
  /** The RTE mode in use. */
  public readonly rteMode: AnsibleFormsRteMode;

  constructor(name: string, args: AnsibleFormsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:AnsibleForms", name, {}, opts);
    const where = `AnsibleForms ${name}`;
    const p = plan(name, args);
    const problems = [
      ...settingsProblems(args, where),
      ...(p.sidecar?.problems ?? []).map((problem) => `${where}: ${problem}`),
      ...seedProblemLines(
        p.seed,
        p.appEnv.map((e) => e.name as string),
        where,
      ),
    ];
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    this.rteMode = p.mode;
    if (p.mode === "database") pulumi.log.warn(DATABASE_MODE_WARNING, this);

    const secrets = this.config(p, where);
    this.adminPassword = secrets.adminPassword;
    this.rteToken = secrets.rteToken;
    this.rteTokenSecretName = pulumi.output(p.tokenSecret);
    if (p.dbSecret !== undefined) this.mysql(p);
    const seed = this.seedConfigMap(p);
    this.seed = seed.content;
    this.storage(p);
    this.rteInPod(p);
    this.deployment(p, seed.configMapName);
    this.serviceName = this.service(p);
    this.url = pulumi.interpolate`http://${p.appName}.${p.ns}.svc.cluster.local:${APP_PORT}`;
    this.monitoring(p);
    this.caBundle = args.expose?.caBundle;
    this.ingress(p);

    this.registerOutputs({
      serviceName: this.serviceName,
      url: this.url,
      rteTokenSecretName: this.rteTokenSecretName,
      rteToken: this.rteToken,
      adminPassword: this.adminPassword,
      caBundle: this.caBundle,
      seed: this.seed,
    });
  }

  /** A generated password (a secret output, never in plain config). */
  private password(name: string, part: string, length: number): pulumi.Output<string> {
    return new random.RandomPassword(`${name}-${part}`, { length, special: false }, { parent: this }).result;
  }

  /**
   * config.yaml: the Secrets not named in existingSecrets, generated here: the app's keys, the RTE
   * token, the METRICS_TOKENs and the built-in MySQL's passwords.
   */
  private config(p: Plan, where: string): { adminPassword?: pulumi.Output<string>; rteToken?: pulumi.Output<string> } {
    const { name, args, ns, labels } = p;
    const child = { parent: this };
    let adminPassword: pulumi.Output<string> | undefined;
    if (!args.existingSecrets?.keys) {
      adminPassword = this.password(name, "admin-password", 24);
      new k8s.core.v1.Secret(
        `${name}-keys`,
        {
          metadata: { name: p.keysSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: {
            [ANSIBLEFORMS_SECRET_KEYS.encryptionSecret]: this.password(name, "encryption-secret", 32),
            [ANSIBLEFORMS_SECRET_KEYS.accessTokenSecret]: this.password(name, "access-token-secret", 64),
            [ANSIBLEFORMS_SECRET_KEYS.adminPassword]: adminPassword,
          },
        },
        child,
      );
    }
    let rteToken: pulumi.Output<string> | undefined;
    if (!args.existingSecrets?.rteToken) {
      rteToken =
        args.rteToken !== undefined ? checkedToken(args.rteToken, where, this) : this.password(name, "rte-token", 32);
      new k8s.core.v1.Secret(
        `${name}-rte-token`,
        {
          metadata: { name: p.tokenSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.rteToken]: rteToken },
        },
        child,
      );
    }
    const metricsSecret = (existing: string | undefined, part: string) => {
      if (existing) return;
      new k8s.core.v1.Secret(
        `${name}-${part}`,
        {
          metadata: { name: objectName(name, part), namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.metricsToken]: this.password(name, part, 32) },
        },
        child,
      );
    };
    if (p.metrics) metricsSecret(p.metrics.existingSecret, "ansibleforms-metrics");
    if (p.rteMetricsSecret) metricsSecret(p.metrics!.rteExistingSecret, "ansibleforms-rte-metrics");
    if (p.dbSecret !== undefined && !args.existingSecrets?.database) {
      new k8s.core.v1.Secret(
        `${name}-db`,
        {
          metadata: { name: p.dbSecret, namespace: ns, labels: p.mysqlLabels },
          type: "Opaque",
          stringData: {
            [ANSIBLEFORMS_SECRET_KEYS.dbPassword]: this.password(name, "db-password", 32),
            [ANSIBLEFORMS_SECRET_KEYS.dbRootPassword]: this.password(name, "db-root-password", 32),
          },
        },
        child,
      );
    }
    return { adminPassword, rteToken };
  }

  /** seed-configmap.yaml: the runner seed, the RTE's own runner first. */
  private seedConfigMap(p: Plan): RunnerSeed {
    return new RunnerSeed(
      `${p.name}-seed`,
      {
        namespace: p.ns,
        configMapName: objectName(p.name, "ansibleforms-seed"),
        seed: p.seed,
        appEnv: p.appEnv.map((e) => e.name as string),
        labels: p.labels,
      },
      { parent: this },
    );
  }

  /** storage.yaml: the app's persistent disk (the sidecar's spool is made with the RTE, rteInPod). */
  private storage(p: Plan): void {
    new k8s.core.v1.PersistentVolumeClaim(
      `${p.name}-persistent`,
      {
        metadata: { name: objectName(p.name, "ansibleforms-persistent"), namespace: p.ns, labels: p.labels },
        spec: {
          accessModes: ["ReadWriteOnce"],
          ...(p.args.storageClassName ? { storageClassName: p.args.storageClassName } : {}),
          resources: { requests: { storage: p.args.persistentSize ?? "5Gi" } },
        },
      },
      { parent: this },
    );
  }

  /** The RTE in the app pod: its ansible.cfg ConfigMap (config.yaml) and the sidecar's spool (storage.yaml). */
  private rteInPod(p: Plan): void {
    const { name, ns, labels, rte } = p;
    if (p.ansibleCfgConfigMap) {
      new k8s.core.v1.ConfigMap(
        `${name}-rte-ansible-cfg`,
        { metadata: { name: p.ansibleCfgConfigMap, namespace: ns, labels }, data: { "ansible.cfg": rte.ansibleCfg! } },
        { parent: this },
      );
    }
    if (p.mode === "sidecar") {
      const storageClassName = rte.storageClassName ?? p.args.storageClassName;
      new k8s.core.v1.PersistentVolumeClaim(
        `${name}-rte-spool`,
        {
          metadata: { name: objectName(name, "ansibleforms-rte-spool"), namespace: ns, labels },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(storageClassName ? { storageClassName } : {}),
            resources: { requests: { storage: rte.spoolSize ?? "1Gi" } },
          },
        },
        { parent: this },
      );
    }
  }

  /** deployment.yaml: the app, one writer (Recreate), with the RTE container of its mode. */
  private deployment(p: Plan, seedConfigMap: pulumi.Output<string>): void {
    const { name, args, ns, labels, mode } = p;
    const volumes: Volume[] = [
      { name: "persistent", persistentVolumeClaim: { claimName: objectName(name, "ansibleforms-persistent") } },
      { name: "seed", configMap: { name: seedConfigMap } },
      { name: "tmp", emptyDir: {} },
      ...(p.sidecar?.volumes ?? []),
      ...(mode === "sidecar"
        ? [{ name: "rte-spool", persistentVolumeClaim: { claimName: objectName(name, "ansibleforms-rte-spool") } }]
        : []),
    ];
    const containers: k8s.types.input.core.v1.Container[] = [
      {
        name: "ansibleforms",
        image: imageReference(APP_IMAGE, args.image, args.global),
        imagePullPolicy: "IfNotPresent",
        ports: [{ name: "http", containerPort: APP_PORT, protocol: "TCP" }],
        env: p.appEnv,
        volumeMounts: [
          { name: "persistent", mountPath: PERSISTENT_PATH },
          // The ssh keys the app manages on its settings page, kept on its volume.
          { name: "persistent", mountPath: SSH_PATH, subPath: APP_SSH_SUBPATH },
          { name: "seed", mountPath: SEED_DIR, readOnly: true },
          { name: "tmp", mountPath: "/tmp" },
        ],
        resources: { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "1Gi" } },
        startupProbe: { httpGet: { path: "/api/v2/live", port: "http" }, periodSeconds: 10, failureThreshold: 30 },
        livenessProbe: {
          httpGet: { path: "/api/v2/live", port: "http" },
          periodSeconds: 10,
          timeoutSeconds: 5,
          failureThreshold: 6,
        },
        readinessProbe: {
          httpGet: { path: "/api/v2/ready", port: "http" },
          periodSeconds: 10,
          timeoutSeconds: 5,
          failureThreshold: 3,
        },
        securityContext: restrictedContainerSecurityContext({ runAs: { user: NODE_UID } }),
      },
      ...(p.sidecar ? [p.sidecar.container] : []),
    ];
    new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      {
        metadata: {
          name: p.appName,
          namespace: ns,
          labels,
          // helm template has no warning channel: both front ends record the deprecation on the object.
          ...(mode === "database" ? { annotations: { [DEPRECATION_ANNOTATION]: DATABASE_MODE_WARNING } } : {}),
        },
        spec: {
          replicas: 1,
          // One writer of the volume and the schema: never two app pods at once.
          strategy: { type: "Recreate" },
          selector: { matchLabels: selectorLabels(p.appIdentity) },
          template: {
            metadata: podMetadata(
              labels,
              args,
              configChecksums({ "ansible-cfg": p.ansibleCfgConfigMap && p.rte.ansibleCfg }).annotations,
            ),
            spec: {
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              ...podPlacement(args, args.global),
              securityContext: restrictedPodSecurityContext({ user: NODE_UID }),
              ...(mode !== "remote" ? { terminationGracePeriodSeconds: terminationGraceSeconds(p.rte) } : {}),
              containers,
              volumes,
            },
          },
        },
      },
      { parent: this },
    );
  }

  /**
   * service.yaml: the app's Service and its NetworkPolicy. In: only the app's port (the sidecar's
   * is not admitted from outside the pod), from the ingress controller unless allowFrom says
   * otherwise. Out: DNS, the database, allowEgressTo.
   */
  private service(p: Plan): pulumi.Output<string> {
    const { name, args, ns, labels, metrics } = p;
    const child = { parent: this };
    const service = new k8s.core.v1.Service(
      `${name}-service`,
      {
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          type: "ClusterIP",
          selector: selectorLabels(p.appIdentity),
          // Only the app's port: an inbound sidecar is reached on 127.0.0.1, never through a Service.
          ports: [{ name: "http", port: APP_PORT, targetPort: "http", protocol: "TCP" }],
        },
      },
      child,
    );
    const databaseEgress = args.externalDatabase
      ? hostPortEgress(p.db.host, p.db.port)
      : {
          to: [{ podSelector: { matchLabels: selectorLabels(p.mysqlIdentity) } }],
          ports: [{ port: MYSQL_PORT, protocol: "TCP" }],
        };
    new k8s.networking.v1.NetworkPolicy(
      `${name}-app-netpol`,
      {
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          podSelector: { matchLabels: selectorLabels(p.appIdentity) },
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            {
              from: args.allowFrom?.length
                ? args.allowFrom
                : [
                    {
                      namespaceSelector: {
                        matchLabels: { "kubernetes.io/metadata.name": args.ingressNamespace ?? "ingress-nginx" },
                      },
                    },
                  ],
              ports: [{ port: APP_PORT, protocol: "TCP" }],
            },
            // Prometheus scrapes the app's port and the sidecar RTE's (both need their token).
            ...(metrics
              ? [
                  {
                    from: [monitoringPeer(metrics)],
                    ports: [
                      { port: APP_PORT, protocol: "TCP" },
                      ...(p.rteMetricsSecret ? [{ port: p.rtePort, protocol: "TCP" }] : []),
                    ],
                  },
                ]
              : []),
          ],
          egress: [dnsEgressRule(args.dns), databaseEgress, ...(args.allowEgressTo ?? [])],
        },
      },
      child,
    );
    return service.metadata.name;
  }

  /** monitoring.yaml: a ServiceMonitor for the app and a PodMonitor for the sidecar RTE. */
  private monitoring(p: Plan): void {
    if (!p.metrics?.serviceMonitor) return;
    const { name, ns, labels } = p;
    new k8s.apiextensions.CustomResource(
      `${name}-servicemonitor`,
      {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          selector: { matchLabels: selectorLabels(p.appIdentity) },
          endpoints: [{ port: "http", path: "/api/v2/metrics", authorization: bearerFrom(p.appMetricsSecret!) }],
        },
      },
      { parent: this },
    );
    // The sidecar's port is behind no Service (the app reaches it on 127.0.0.1), so a PodMonitor
    // scrapes it by the pod's port name: "port defines the Pod port name which exposes the
    // endpoint" (prometheus-operator monitoring.coreos.com/v1 PodMetricsEndpoint).
    if (p.rteMetricsSecret) {
      new k8s.apiextensions.CustomResource(
        `${name}-rte-podmonitor`,
        {
          apiVersion: "monitoring.coreos.com/v1",
          kind: "PodMonitor",
          metadata: { name: objectName(name, "ansibleforms-rte"), namespace: ns, labels },
          spec: {
            selector: { matchLabels: selectorLabels(p.appIdentity) },
            podMetricsEndpoints: [{ port: "rte", path: "/metrics", authorization: bearerFrom(p.rteMetricsSecret) }],
          },
        },
        { parent: this },
      );
    }
  }

  /** service.yaml's Ingress (expose): the app's public name, which an outbound RTE elsewhere dials. */
  private ingress(p: Plan): void {
    const expose = p.args.expose;
    if (!expose) return;
    new k8s.networking.v1.Ingress(
      `${p.name}-ingress`,
      {
        metadata: {
          name: p.appName,
          namespace: p.ns,
          labels: p.labels,
          ...(expose.annotations ? { annotations: expose.annotations } : {}),
        },
        spec: {
          ...(expose.ingressClassName ? { ingressClassName: expose.ingressClassName } : {}),
          ...(expose.tlsSecretName ? { tls: [{ hosts: [expose.host], secretName: expose.tlsSecretName }] } : {}),
          rules: [
            {
              host: expose.host,
              http: {
                paths: [
                  { path: "/", pathType: "Prefix", backend: { service: { name: p.appName, port: { name: "http" } } } },
                ],
              },
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /** mysql.yaml: MySQL 8.4, a StatefulSet with its own volume, a Service, and a NetworkPolicy admitting only the app. */
  private mysql(p: Plan): void {
    const child = { parent: this };
    const { name, ns, mysqlName, args } = p;
    const labels = p.mysqlLabels;
    const dbSecret = p.dbSecret!;
    new k8s.core.v1.Service(
      `${name}-mysql-service`,
      {
        metadata: { name: mysqlName, namespace: ns, labels },
        spec: {
          type: "ClusterIP",
          selector: selectorLabels(p.mysqlIdentity),
          ports: [{ name: "mysql", port: MYSQL_PORT, targetPort: "mysql", protocol: "TCP" }],
        },
      },
      child,
    );
    new k8s.apps.v1.StatefulSet(
      `${name}-mysql`,
      {
        metadata: { name: mysqlName, namespace: ns, labels },
        spec: {
          serviceName: mysqlName,
          replicas: 1,
          selector: { matchLabels: selectorLabels(p.mysqlIdentity) },
          template: {
            metadata: podMetadata(labels, args.mysql),
            spec: {
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              ...podPlacement(args.mysql, args.global),
              securityContext: restrictedPodSecurityContext({ user: MYSQL_UID }),
              containers: [
                {
                  name: "mysql",
                  image: imageReference(MYSQL_IMAGE, args.mysql?.image, args.global),
                  imagePullPolicy: "IfNotPresent",
                  ports: [{ name: "mysql", containerPort: MYSQL_PORT, protocol: "TCP" }],
                  env: [
                    secretEnv("MYSQL_ROOT_PASSWORD", { name: dbSecret, key: ANSIBLEFORMS_SECRET_KEYS.dbRootPassword }),
                    { name: "MYSQL_DATABASE", value: DATABASE_SCHEMA },
                    { name: "MYSQL_USER", value: "ansibleforms" },
                    secretEnv("MYSQL_PASSWORD", { name: dbSecret, key: ANSIBLEFORMS_SECRET_KEYS.dbPassword }),
                  ],
                  volumeMounts: [
                    { name: "data", mountPath: "/var/lib/mysql" },
                    { name: "run", mountPath: "/var/run/mysqld" },
                    { name: "tmp", mountPath: "/tmp" },
                  ],
                  resources: { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1Gi" } },
                  livenessProbe: { tcpSocket: { port: "mysql" }, initialDelaySeconds: 30, periodSeconds: 10 },
                  readinessProbe: {
                    exec: { command: ["mysqladmin", "ping", "-h", "127.0.0.1", "--silent"] },
                    periodSeconds: 10,
                  },
                  securityContext: restrictedContainerSecurityContext({ runAs: { user: MYSQL_UID } }),
                },
              ],
              volumes: [
                { name: "run", emptyDir: {} },
                { name: "tmp", emptyDir: {} },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data", labels },
              spec: {
                accessModes: ["ReadWriteOnce"],
                ...(args.storageClassName ? { storageClassName: args.storageClassName } : {}),
                resources: { requests: { storage: args.mysql?.size ?? "8Gi" } },
              },
            },
          ],
        },
      },
      child,
    );
    new k8s.networking.v1.NetworkPolicy(
      `${name}-mysql-netpol`,
      {
        metadata: { name: mysqlName, namespace: ns, labels },
        spec: {
          podSelector: { matchLabels: selectorLabels(p.mysqlIdentity) },
          // In: only the app. Out: nothing (MySQL dials nowhere).
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            {
              from: [{ podSelector: { matchLabels: selectorLabels(p.appIdentity) } }],
              ports: [{ port: MYSQL_PORT, protocol: "TCP" }],
            },
          ],
          egress: [],
        },
      },
      child,
    );
  }
}
