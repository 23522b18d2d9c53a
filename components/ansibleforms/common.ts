/**
 * What the AnsibleForms components share: images, ports and paths from upstream, the RTE's
 * environment and mounts (the same for the inbound sidecar and the outbound RemoteRte), the
 * resources an RTE needs for its job count, and the checks both front ends make.
 */
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { imageReference, type GlobalSettings, type ImageSettings } from "../shared/image";
import type { MatchLabels, NetworkPolicyEgressRule, NetworkPolicyPeer } from "../shared/network";
import { httpGetProbe, type ContainerResources } from "../shared/pod";
import type { ValueOf } from "../shared/enum";

type Container = k8s.types.input.core.v1.Container;
type Volume = k8s.types.input.core.v1.Volume;
type VolumeMount = k8s.types.input.core.v1.VolumeMount;
type EnvVar = k8s.types.input.core.v1.EnvVar;
type Resources = k8s.types.input.core.v1.ResourceRequirements;

/** The AnsibleForms release the app's and the RTE's images default to. @internal */
export const DEFAULT_TAG = "7.3.0";
/** The app's image, at DEFAULT_TAG. @internal */
export const APP_IMAGE: ImageSettings = {
  registry: "ghcr.io",
  repository: "ansibleforms/ansibleforms",
  tag: DEFAULT_TAG,
};
/**
 * The RTE images are three published layers, ghcr.io/ansibleforms/ansibleforms-rte-<flavour>:
 * "full" (ansible with its collections, the one to run), "core" (ansible-core, to build your own
 * FROM) and "base" (no python, no ansible); "tags always match the app's" (ansibleforms/ansibleforms
 * server/src/runners/README.md, "Updating an RTE", and DEPRECATED.md "pull ... ansibleforms-rte-full:7").
 * There is no plain ansibleforms-rte image.
 * @internal
 */
export const RTE_REGISTRY = "ghcr.io";
/** The RTE layers' repository, before its `-<flavour>`. @internal */
export const RTE_REPOSITORY_PREFIX = "ansibleforms/ansibleforms-rte";
/**
 * The published RTE layers. This and the other string unions of the settings are `as const`
 * objects with a type of the same name: TypeScript takes the plain strings, Pulumi's component
 * analyzer reads them as enums (pulumi/pulumi sdk/nodejs/provider/experimental/analyzer.ts,
 * extractEnumMembers).
 */
export const RteFlavor = {
  /** ansible with its collections, the one to run. */
  Full: "full",
  /** ansible-core, to build your own FROM. */
  Core: "core",
  /** No python, no ansible. */
  Base: "base",
} as const;
export type RteFlavor = ValueOf<typeof RteFlavor>;
const RTE_FLAVORS: readonly RteFlavor[] = Object.values(RteFlavor);
/** The image of the MySQL the component runs when no external database is given. @internal */
export const MYSQL_IMAGE: ImageSettings = { registry: "docker.io", repository: "library/mysql", tag: "8.4" };

/** Both images run as node, uid 1000; MySQL's image as mysql, uid 999. @internal */
export const NODE_UID = 1000;
/** The mysql user of MySQL's image. @internal */
export const MYSQL_UID = 999;

/** The port the app listens on (its PORT). @internal */
export const APP_PORT = 8000;
/** The sidecar shares the app pod's network, so it must listen elsewhere than the app. @internal */
export const SIDECAR_RTE_PORT = 8001;
/** The port an outbound RemoteRte listens on (its PORT), for probes and metrics. @internal */
export const RTE_PORT = 8000;
/** MySQL's port, the default of an external database's too. @internal */
export const MYSQL_PORT = 3306;

/** The app's persistent folder, where its volume is mounted. @internal */
export const PERSISTENT_PATH = "/app/dist/persistent";
/** Where the runner seed's ConfigMap is mounted in the app container. @internal */
export const SEED_DIR = "/etc/ansibleforms/seed";
/** The runner seed's key in its ConfigMap, and so its file name. @internal */
export const SEED_FILE = "seed.yaml";
export const SEED_PATH = `${SEED_DIR}/${SEED_FILE}`;
const SPOOL_PATH = "/var/spool/ansibleforms-rte";
/** node's ssh folder (keys, known_hosts) in the app's and the RTE's images. @internal */
export const SSH_PATH = "/home/node/.ssh";
/** The app's ssh folder (managed on its settings page), kept on its volume under this subPath. @internal */
export const APP_SSH_SUBPATH = "ssh";
/** Where a RemoteRte mounts the CA bundle that signed the app's certificate. @internal */
export const CA_DIR = "/etc/ansibleforms/ca";
/** The CA bundle's key in its ConfigMap, and so its file name. @internal */
export const CA_FILE = "ca.crt";

export const MIN_TOKEN_LENGTH = 16;
/** The database schema AnsibleForms uses; its name is fixed upstream (there is no DB_NAME). @internal */
export const DATABASE_SCHEMA = "AnsibleForms";

/** Keys in the Secrets the components make, or expect in existing Secrets of the same role. */
export const ANSIBLEFORMS_SECRET_KEYS = {
  encryptionSecret: "encryption-secret",
  accessTokenSecret: "access-token-secret",
  adminPassword: "admin-password",
  dbPassword: "password",
  dbRootPassword: "root-password",
  rteToken: "token",
  metricsToken: "token",
} as const;

/** How an RTE gets a job's files. */
export const RteFiles = {
  /** The app sends them with the job (the default). */
  Transfer: "transfer",
  /** The app's playbook folders, read-write (sidecar only). */
  Local: "local",
} as const;
export type RteFiles = ValueOf<typeof RteFiles>;

/** Settings of an RTE container, inbound sidecar or outbound RemoteRte alike. */
export interface RteSettings {
  /**
   * The published RTE layer: "full" (default; ansible with its collections), "core"
   * (ansible-core only) or "base" (no python, no ansible): ghcr.io/ansibleforms/ansibleforms-rte-<flavor>.
   */
  flavor?: RteFlavor;
  /**
   * The RTE image: registry (default ghcr.io), repository (default ansibleforms/ansibleforms-rte-<flavor>;
   * a custom one, built FROM a layer, wins over flavor), tag (default the app's: upstream publishes
   * the RTE with every app release) and digest (wins over the tag).
   */
  image?: ImageSettings;
  /**
   * Playbooks run at once (RTE_MAX_JOBS, default 10); the container's resources are sized from it.
   * @minimum 1
   * @maximum 100
   * @asType integer
   */
  maxJobs?: number;
  /** How the RTE gets a job's files: "transfer" (default) or "local" (the app's playbook folders, read-write; sidecar only). */
  files?: RteFiles;
  /**
   * Size of the spool volume that keeps unacknowledged output across restarts (default 1Gi).
   * @pattern ^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti)$
   */
  spoolSize?: string;
  /** StorageClass of the spool volume (default: the cluster's default). */
  storageClassName?: string;
  /**
   * Seconds a stopping RTE waits for its playbooks (RTE_DRAIN_SECONDS, default 25).
   * @minimum 0
   * @maximum 3600
   * @asType integer
   */
  drainSeconds?: number;
  /**
   * Bytes of output kept per stream (PROCESS_MAX_BUFFER; upstream default 50 MB).
   * @minimum 1
   * @asType integer
   */
  processMaxBuffer?: number;
  /**
   * An existing Secret with the ssh files (private keys, known_hosts, config) for /home/node/.ssh.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  sshSecret?: string;
  /** The content of /etc/ansible/ansible.cfg (a ConfigMap is made). */
  ansibleCfg?: string;
  /**
   * An existing PersistentVolumeClaim mounted read-only at /etc/ansible/collections.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  collectionsClaim?: string;
  /**
   * An existing PersistentVolumeClaim mounted read-only at /etc/ansible/roles.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  rolesClaim?: string;
  /** Overrides the resources sized from maxJobs. */
  resources?: ContainerResources;
  /**
   * More plain environment variables for the RTE, after the ones the component sets (a name it
   * sets is refused): settings this release does not know, or names upstream renamed (docs/ansibleforms.md,
   * "Assumptions to check"). Secrets do not belong here.
   */
  extraEnv?: PlainEnvVar[];
}

/** A plain environment variable. */
export interface PlainEnvVar {
  /**
   * The name.
   * @pattern ^[A-Za-z_][A-Za-z0-9_]*$
   */
  name: string;
  /** The value. */
  value: string;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/**
 * Egress to host:port. A NetworkPolicy matches addresses, never names: an IPv4 literal becomes a
 * /32 ipBlock; a host name (an in-cluster Service, a database, the app's public name) opens the
 * port to any address, the closest a NetworkPolicy can get (docs/ansibleforms.md, "The security boundary").
 * @internal
 */
export function hostPortEgress(host: string, port: number): NetworkPolicyEgressRule {
  return {
    ...(IPV4.test(host) ? { to: [{ ipBlock: { cidr: `${host}/32` } }] } : {}),
    ports: [{ port, protocol: "TCP" }],
  };
}

/** Egress to the host and port of a URL (the scheme's default port when it names none). @internal */
export function urlEgress(url: string): NetworkPolicyEgressRule {
  const parsed = new URL(url);
  const port = parsed.port ? Number(parsed.port) : /^(https|wss):$/.test(parsed.protocol) ? 443 : 80;
  return hostPortEgress(parsed.hostname, port);
}

/**
 * Prometheus scraping, off by default. The app serves GET /api/v2/metrics and an RTE GET /metrics
 * on its port, both only when METRICS_TOKEN is set and only to a caller sending it as a bearer
 * token (ansibleforms/ansibleforms server/src/lib/metrics.js). The app and each RTE get tokens of
 * their own: an RTE never holds the app's.
 */
export interface MetricsSettings {
  /** Set METRICS_TOKEN and admit scrapes from the monitoring namespace (default false). */
  enabled?: boolean;
  /**
   * The namespace Prometheus scrapes from (default monitoring).
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  namespace?: string;
  /** Prometheus's pods in that namespace (default: any pod there). */
  podSelector?: MatchLabels;
  /** A prometheus-operator ServiceMonitor for the app and a PodMonitor for each RTE (default false; needs the operator's CRDs). */
  serviceMonitor?: boolean;
  /**
   * An existing Secret (key token) with the METRICS_TOKEN (default: generated).
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  existingSecret?: string;
}

/** The monitoring namespace (and its Prometheus pods) as a NetworkPolicy peer. @internal */
export function monitoringPeer(metrics: MetricsSettings): NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": metrics.namespace || "monitoring" } },
    ...(metrics.podSelector && Object.keys(metrics.podSelector.matchLabels ?? {}).length > 0
      ? { podSelector: metrics.podSelector }
      : {}),
  };
}

/**
 * A scrape endpoint's bearer token from a Secret: prometheus-operator's SafeAuthorization,
 * "credentials defines a key of a Secret in the namespace" of the monitor (monitoring.coreos.com/v1
 * Endpoint and PodMetricsEndpoint `authorization`, which replaces the deprecated bearerTokenSecret).
 * @internal
 */
export function bearerFrom(secret: string): { type: string; credentials: { name: string; key: string } } {
  return { type: "Bearer", credentials: { name: secret, key: ANSIBLEFORMS_SECRET_KEYS.metricsToken } };
}

/** An env var from a key of a Secret. @internal */
export function secretEnv(name: string, ref: { name: pulumi.Input<string>; key: string }): EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

/** The container's resources for a job count: each playbook and its forks need CPU and memory. */
function rteResources(maxJobs: number): { requests: Record<string, string>; limits: Record<string, string> } {
  return {
    requests: { cpu: `${100 + 100 * maxJobs}m`, memory: `${256 + 128 * maxJobs}Mi` },
    limits: { memory: `${512 + 256 * maxJobs}Mi` },
  };
}

function tokenProblem(token: string, where: string): string | undefined {
  return token.length < MIN_TOKEN_LENGTH
    ? `${where}: the RTE token must be at least ${MIN_TOKEN_LENGTH} characters (got ${token.length})`
    : undefined;
}

/** The problem with a token known at build time (a plain string) that is too short; an Output is checked by checkedToken. @internal */
export function tokenProblems(token: pulumi.Input<string> | undefined, where: string): string[] {
  const problem = typeof token === "string" ? tokenProblem(token, where) : undefined;
  return problem ? [problem] : [];
}

/**
 * The token as a secret output. A plain string was checked with the other settings
 * (tokenProblems); an Output is checked when its value is known, which fails the Secret that
 * carries it with an error on `resource`.
 * @internal
 */
export function checkedToken(
  token: pulumi.Input<string>,
  where: string,
  resource: pulumi.Resource,
): pulumi.Output<string> {
  return pulumi.secret(
    pulumi.output(token).apply((value) => {
      const problem = tokenProblem(value, where);
      if (problem) throw new pulumi.ResourceError(problem, resource);
      return value;
    }),
  );
}

/** The problems of an RTE's settings, inbound sidecar or outbound RemoteRte alike. @internal */
export function rteSettingsProblems(settings: RteSettings, where: string): string[] {
  const problems: string[] = [];
  const maxJobs = settings.maxJobs ?? 10;
  if (!Number.isInteger(maxJobs) || maxJobs < 1) {
    problems.push(`${where}: maxJobs must be a positive integer (got ${maxJobs})`);
  }
  if (settings.files !== undefined && settings.files !== "transfer" && settings.files !== "local") {
    problems.push(`${where}: files must be "transfer" or "local" (got ${JSON.stringify(settings.files)})`);
  }
  if (settings.flavor !== undefined && !RTE_FLAVORS.includes(settings.flavor)) {
    problems.push(`${where}: flavor must be full, core or base (got ${JSON.stringify(settings.flavor)})`);
  }
  return problems;
}

/** The RTE image: the custom repository or the flavour's layer, at the given tag or the app's. */
function rteImage(settings: RteSettings, defaultTag: string, global: GlobalSettings | undefined): string {
  return imageReference(
    { registry: RTE_REGISTRY, repository: `${RTE_REPOSITORY_PREFIX}-${settings.flavor ?? "full"}`, tag: defaultTag },
    settings.image,
    global,
  );
}

/** The Secrets variables read (valueFrom.secretKeyRef), those whose names are known here. @internal */
export function secretsReadBy(env: readonly EnvVar[]): string[] {
  return env
    .map((e) => (e.valueFrom as { secretKeyRef?: { name?: unknown } } | undefined)?.secretKeyRef?.name)
    .filter((name): name is string => typeof name === "string");
}

/**
 * An RTE reads no Secret but its own token, metrics token and (database mode) database password
 * (the entryway-rte-boundary policy checks the same): an extraEnv is a plain value, never a Secret's
 * (a caller in JavaScript may pass one), and its sshSecret, mounted whole, is a Secret of its own:
 * neither one its variables read (the token's may be the app's keys Secret) nor one of the app's.
 */
function rteSecretProblems(settings: RteSettings, env: readonly EnvVar[], appSecrets: readonly string[]): string[] {
  const problems = (settings.extraEnv ?? [])
    .filter((extra) => (extra as EnvVar).valueFrom !== undefined)
    .map(
      (extra) =>
        `extraEnv ${extra.name}: a plain value only (the RTE reads no Secret but its own token and metrics token)`,
    );
  const ssh = settings.sshSecret;
  if (ssh && [...secretsReadBy(env), ...appSecrets].includes(ssh)) {
    problems.push(
      `sshSecret ${ssh} is a Secret the RTE's token or the app also reads: the RTE's ssh files are a Secret of their own (mounted whole, it gives every key it holds)`,
    );
  }
  return problems;
}

/** An RTE container as rteContainer builds it, for the pod that runs it. @internal */
export interface RteContainerSpec {
  readonly container: Container;
  /** Pod volumes the container needs (the spool is not one of them: its owner decides). */
  readonly volumes: Volume[];
  /** Settings the container cannot be built from (an extraEnv the component sets): its owner reports them with its own. */
  readonly problems: string[];
}

/**
 * The RTE container: its token from a Secret and nothing else of the app's (no DB_*,
 * ENCRYPTION_SECRET, ACCESS_TOKEN_SECRET, METRICS_TOKEN), its spool on the volume named
 * "rte-spool", ssh keys with owner-only modes, optional /etc/ansible mounts.
 * @internal
 */
export function rteContainer(options: {
  readonly settings: RteSettings;
  readonly defaultTag: string;
  readonly global?: GlobalSettings;
  readonly port: number;
  /** RTE_MODE; "database" is the deprecated mode without RTE_MODE, spool or file transfer. */
  readonly mode: "inbound" | "outbound" | "database";
  readonly token: { name: pulumi.Input<string>; key: string };
  /** The Secret holding the RTE's own METRICS_TOKEN (never the app's), when metrics are on. */
  readonly metricsSecret?: pulumi.Input<string>;
  readonly ansibleCfgConfigMap?: pulumi.Input<string>;
  readonly extraEnv?: EnvVar[];
  readonly extraMounts?: VolumeMount[];
  readonly securityContext: k8s.types.input.core.v1.SecurityContext;
  /** The Secrets the app's container reads (in its pod): the RTE's sshSecret is none of them. */
  readonly appSecrets?: readonly string[];
}): RteContainerSpec {
  const { settings } = options;
  const maxJobs = settings.maxJobs ?? 10;
  const socket = options.mode !== "database";
  const env: EnvVar[] = [
    { name: "PORT", value: String(options.port) },
    ...(socket ? [{ name: "RTE_MODE", value: options.mode }] : []),
    secretEnv("RTE_TOKEN", options.token),
    { name: "RTE_MAX_JOBS", value: String(maxJobs) },
    ...(socket
      ? [
          { name: "RTE_FILES", value: settings.files ?? "transfer" },
          { name: "RTE_SPOOL_PATH", value: SPOOL_PATH },
          { name: "RTE_DRAIN_SECONDS", value: String(settings.drainSeconds ?? 25) },
        ]
      : []),
    ...(settings.processMaxBuffer !== undefined
      ? [{ name: "PROCESS_MAX_BUFFER", value: String(settings.processMaxBuffer) }]
      : []),
    ...(options.metricsSecret
      ? [secretEnv("METRICS_TOKEN", { name: options.metricsSecret, key: ANSIBLEFORMS_SECRET_KEYS.metricsToken })]
      : []),
    ...(options.extraEnv ?? []),
  ];
  const taken = settings.extraEnv?.filter((extra) => env.some((e) => e.name === extra.name)) ?? [];
  const problems =
    taken.length > 0
      ? [`extraEnv ${taken.map((e) => e.name).join(", ")}: set by the component (change the setting that sets it)`]
      : [];
  problems.push(...rteSecretProblems(settings, env, options.appSecrets ?? []));
  env.push(...(settings.extraEnv ?? []));
  const mounts: VolumeMount[] = [
    ...(socket ? [{ name: "rte-spool", mountPath: SPOOL_PATH }] : []),
    { name: "rte-tmp", mountPath: "/tmp" },
    { name: "rte-ansible-home", mountPath: "/home/node/.ansible" },
  ];
  const volumes: Volume[] = [
    { name: "rte-tmp", emptyDir: {} },
    { name: "rte-ansible-home", emptyDir: {} },
  ];
  if (settings.sshSecret) {
    mounts.push({ name: "rte-ssh", mountPath: SSH_PATH, readOnly: true });
    volumes.push({ name: "rte-ssh", secret: { secretName: settings.sshSecret, defaultMode: 0o400 } });
  }
  if (options.ansibleCfgConfigMap) {
    mounts.push({
      name: "rte-ansible-cfg",
      mountPath: "/etc/ansible/ansible.cfg",
      subPath: "ansible.cfg",
      readOnly: true,
    });
    volumes.push({ name: "rte-ansible-cfg", configMap: { name: options.ansibleCfgConfigMap } });
  }
  if (settings.collectionsClaim) {
    mounts.push({ name: "rte-collections", mountPath: "/etc/ansible/collections", readOnly: true });
    volumes.push({
      name: "rte-collections",
      persistentVolumeClaim: { claimName: settings.collectionsClaim, readOnly: true },
    });
  }
  if (settings.rolesClaim) {
    mounts.push({ name: "rte-roles", mountPath: "/etc/ansible/roles", readOnly: true });
    volumes.push({ name: "rte-roles", persistentVolumeClaim: { claimName: settings.rolesClaim, readOnly: true } });
  }
  mounts.push(...(options.extraMounts ?? []));
  const resources: Resources = settings.resources ?? rteResources(maxJobs);
  const probe = (path: string, failureThreshold: number) =>
    httpGetProbe(path, options.port, { periodSeconds: 10, timeoutSeconds: 5, failureThreshold });
  return {
    container: {
      name: "rte",
      image: rteImage(settings, options.defaultTag, options.global),
      imagePullPolicy: "IfNotPresent",
      ports: [{ name: "rte", containerPort: options.port, protocol: "TCP" }],
      env,
      volumeMounts: mounts,
      resources,
      livenessProbe: probe("/live", 6),
      readinessProbe: probe("/ready", 3),
      securityContext: options.securityContext,
    },
    volumes,
    problems,
  };
}

/** Moved to components/shared/config-file.ts (the exec gateway's settings roll the same way); re-exported for the AnsibleForms files. @internal */
export { configChecksums } from "../shared/config-file";

/** Seconds the pod gets to stop: the RTE's drain time plus a margin for the server itself. @internal */
export function terminationGraceSeconds(settings: RteSettings): number {
  return (settings.drainSeconds ?? 25) + 10;
}
