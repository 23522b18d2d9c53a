/**
 * The inbound RTE as a sidecar: container `rte` in the app pod, RTE_MODE=inbound, reached by the
 * app on 127.0.0.1 at its own port (the pod's network is shared, so it cannot be the app's). It
 * holds only its token; with RTE_FILES=local it also mounts the app's playbook folders.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings } from "../shared/image";
import { restrictedContainerSecurityContext } from "../shared/security";
import {
  APP_SSH_SUBPATH,
  NODE_UID,
  PERSISTENT_PATH,
  rteContainer,
  SSH_PATH,
  type RteContainerSpec,
  type RteSettings,
} from "./common";
import { LOCAL_FILES_FOLDERS } from "./contract";

/** The sidecar's settings: an RTE's, plus the port it listens on in the app pod. */
export interface SidecarRteSettings extends RteSettings {
  /**
   * The sidecar's port (PORT), different from the app's (default 8001).
   * @minimum 1024
   * @maximum 65535
   * @asType integer
   */
  port?: number;
  /**
   * Mount the app's ssh folder (its keys and known_hosts, managed on its settings page)
   * read-only at /home/node/.ssh, instead of an sshSecret of the RTE's own.
   */
  sshFromApp?: boolean;
}

/**
 * The sidecar's mounts of the app's volume: the playbook folders for RTE_FILES=local (and database
 * mode), never the whole volume; the ssh folder read-only for sshFromApp.
 * @internal
 */
export function appVolumeMounts(
  settings: SidecarRteSettings,
  persistentVolume: string,
  playbookFolders: boolean,
): { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[] {
  return [
    ...(playbookFolders
      ? LOCAL_FILES_FOLDERS.map((folder) => ({
          name: persistentVolume,
          mountPath: `${PERSISTENT_PATH}/${folder}`,
          subPath: folder,
        }))
      : []),
    ...(settings.sshFromApp
      ? [{ name: persistentVolume, mountPath: SSH_PATH, subPath: APP_SSH_SUBPATH, readOnly: true }]
      : []),
  ];
}

/** What every RTE container in the app pod is built from (inbound sidecar or database mode). @internal */
export interface AppPodRteOptions {
  readonly settings: SidecarRteSettings;
  readonly port: number;
  readonly defaultTag: string;
  readonly global?: GlobalSettings;
  readonly token: { name: pulumi.Input<string>; key: string };
  /** The Secret with the RTE's own METRICS_TOKEN, when metrics are on. */
  readonly metricsSecret?: pulumi.Input<string>;
  readonly ansibleCfgConfigMap?: pulumi.Input<string>;
  /** The pod volume holding the app's /app/dist/persistent. */
  readonly persistentVolume: string;
  /** The Secrets the app's container reads: the RTE's sshSecret is none of them. */
  readonly appSecrets: readonly string[];
}

/** The sidecar container and the pod volumes it needs, besides "rte-spool" and the app's volume. @internal */
export function inboundSidecar(options: AppPodRteOptions): RteContainerSpec {
  const local = options.settings.files === "local";
  return rteContainer({
    settings: options.settings,
    defaultTag: options.defaultTag,
    global: options.global,
    port: options.port,
    mode: "inbound",
    token: options.token,
    metricsSecret: options.metricsSecret,
    ansibleCfgConfigMap: options.ansibleCfgConfigMap,
    extraMounts: appVolumeMounts(options.settings, options.persistentVolume, local),
    securityContext: restrictedContainerSecurityContext({ runAs: { user: NODE_UID } }),
    appSecrets: options.appSecrets,
  });
}

/** The seed's runner for the sidecar: the default, inbound, on 127.0.0.1. */
export function inboundRunnerUri(port: number): string {
  return `http://127.0.0.1:${port}`;
}
