// What every step of AnsibleForms shares, worked out before any object is made.
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../shared/labels";
import { objectName, statefulSetName } from "../shared/names";
import type { SecretKeyRef } from "../shared/secret";
import {
  APP_PORT,
  DEFAULT_TAG,
  ANSIBLEFORMS_SECRET_KEYS,
  MYSQL_PORT,
  SEED_PATH,
  SIDECAR_RTE_PORT,
  secretEnv,
  secretsReadBy,
  type RteContainerSpec,
} from "./common";
import { databaseModeSidecar } from "./database-rte";
import type { Runner, SeedSpec } from "./runner-seed";
import { inboundRunnerUri, inboundSidecar } from "./sidecar-rte";
import type {
  AnsibleFormsArgs,
  AnsibleFormsMetricsSettings,
  AnsibleFormsRteMode,
  AnsibleFormsRteSettings,
} from "./args";

type EnvVar = k8s.types.input.core.v1.EnvVar;

/** @internal */
export type Identity = { name: string; instance: string; component: string };

/**
 * What every step shares, worked out before any object is made: the names and labels the chart's
 * templates/ansibleforms/_helpers.tpl defines, the database, the app's environment and the seed,
 * and the RTE container in the pod. Pure, so that every problem is known before the first object.
 * @internal
 */
export interface Plan {
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

/** @internal */
export function plan(name: string, args: AnsibleFormsArgs): Plan {
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
