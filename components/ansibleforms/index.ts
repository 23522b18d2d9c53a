// AnsibleForms with its RTE: the app, the inbound sidecar, the outbound RemoteRte, the
// deprecated database mode and the runner seed.
export * from "./args";
export { AnsibleForms } from "./ansibleforms";
export * from "./remote-rte";
export * from "./runner-seed";
export { DATABASE_MODE_WARNING } from "./database-rte";
export { inboundRunnerUri, type SidecarRteSettings } from "./sidecar-rte";
export {
  ANSIBLEFORMS_SECRET_KEYS,
  MIN_TOKEN_LENGTH,
  SEED_PATH,
  type RteSettings,
  type PlainEnvVar,
  type MetricsSettings,
  RteFlavor,
  RteFiles,
} from "./common";
export * from "./config";
