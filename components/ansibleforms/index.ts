// AnsibleForms with its RTE: the app, the inbound sidecar, the outbound RemoteRte, the
// deprecated database mode and the runner seed.
export * from "./ansibleforms";
export * from "./remote-rte";
export * from "./runner-seed";
export { DATABASE_MODE_WARNING } from "./database-rte";
export { inboundRunnerUri, type SidecarRteSettings } from "./sidecar-rte";
export { KEYS as ANSIBLEFORMS_SECRET_KEYS, MIN_TOKEN_LENGTH, SEED_PATH, type RteSettings, type RteResources, type PlainEnvVar, RteFlavor, RteFiles, EgressProtocol, type SecretKeyRef as AnsibleFormsSecretKeyRef } from "./common";
export * from "./config";
