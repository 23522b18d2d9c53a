/**
 * The deprecated database mode (RTE 7.0-7.2, removed in AnsibleForms 8.0.0): an RTE without
 * RTE_MODE that holds the database settings (DB_*), receives jobs by HTTP (POST /rte/v1/jobs)
 * and reads the app's files from the app's own volume. Supported for upgrades only; it crosses
 * the "RTE holds only its token" boundary, so every use warns.
 *
 * Such an RTE registers itself as a runner by default (RTE_REGISTER=1) at RTE_URL or else its own
 * IP and port, and the first one registered becomes the default (ansibleforms/ansibleforms
 * server/src/runners/README.md, "Using a runner, step by step" and "Configuration"). The seed
 * already declares this runner, so registering would add a second, unmanaged row: RTE_REGISTER=0.
 * RTE_URL still names the sidecar's address (the README's "the address the app reaches it on").
 * ENCRYPTION_SECRET is left out: the RTE needs it "only to register itself" (same README;
 * server/src/rte/server.js startRte warns about a missing one only when RTE_REGISTER is not "0").
 */
import type * as k8s from "@pulumi/kubernetes";
import { restrictedContainerSecurityContext } from "../shared/security";
import { NODE_UID, rteContainer, type RteContainerSpec } from "./common";
import { appVolumeMounts, inboundRunnerUri, type AppPodRteOptions } from "./sidecar-rte";

export const DATABASE_MODE_WARNING =
  "AnsibleForms RTE database mode is deprecated (RTE 7.0-7.2, removed in 8.0.0): the RTE holds the database credentials. Move to the inbound sidecar (rte.mode: sidecar) or an outbound RemoteRte.";

/** The annotation on the app's Deployment that records the deprecation (the chart sets it too). @internal */
export const DEPRECATION_ANNOTATION = "entryway/deprecated";

/** The database-mode RTE container in the app pod; `databaseEnv` is the app's DB_* (never ENCRYPTION_SECRET). @internal */
export function databaseModeSidecar(
  options: AppPodRteOptions & { readonly databaseEnv: k8s.types.input.core.v1.EnvVar[] },
): RteContainerSpec {
  return rteContainer({
    settings: options.settings,
    defaultTag: options.defaultTag,
    global: options.global,
    port: options.port,
    mode: "database",
    token: options.token,
    ansibleCfgConfigMap: options.ansibleCfgConfigMap,
    extraEnv: [
      ...options.databaseEnv,
      { name: "RTE_REGISTER", value: "0" },
      { name: "RTE_URL", value: inboundRunnerUri(options.port) },
    ],
    extraMounts: appVolumeMounts(options.settings, options.persistentVolume, true),
    securityContext: restrictedContainerSecurityContext({ runAs: { user: NODE_UID } }),
    appSecrets: options.appSecrets,
  });
}
