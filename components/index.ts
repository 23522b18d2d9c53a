// The Entryway library, for platform repos to import: every component, its args, the stack
// config's sections and the shapes and enums they use. Named exports, so that this list is the
// public API: the helpers the components share (names, labels, NetworkPolicy and security-context
// builders, RBAC rules, validators, the stack config's mapping to args) stay inside, each with the
// JSDoc tag that
// tsconfig.build.json's stripInternal drops from the published declarations
// (test/package/declarations.test.ts). This comment must not spell that tag: TypeScript strips
// any declaration whose leading comment contains it, the next line included.
export { parseStackConfig, StackConfigError, type StackConfig, DEFAULT_STACK_NAME, Stack } from "./stack";
export {
  DATABASE_MODE_WARNING,
  inboundRunnerUri,
  type SidecarRteSettings,
  ANSIBLEFORMS_SECRET_KEYS,
  MIN_TOKEN_LENGTH,
  SEED_PATH,
  type RteSettings,
  type PlainEnvVar,
  type MetricsSettings,
  RteFlavor,
  RteFiles,
  AnsibleFormsRteMode,
  type AnsibleFormsRteSettings,
  type ExternalDatabase,
  type AnsibleFormsMetricsSettings,
  type SecretEnvVar,
  type MysqlSettings,
  type AnsibleFormsExistingSecrets,
  type AnsibleFormsRunners,
  type AnsibleFormsExpose,
  type AnsibleFormsBaseSettings,
  type AnsibleFormsSettings,
  type AnsibleFormsArgs,
  AnsibleForms,
  type RemoteRteBaseSettings,
  type RemoteRteSettings,
  type RemoteRteArgs,
  RemoteRte,
  RunnerType,
  RteRunnerMode,
  type SeedRunner,
  type RteRunner,
  type AwxRunner,
  type Runner,
  type SeedSpec,
  type RunnerSeedArgs,
  RunnerSeed,
  type AnsibleFormsConfig,
  type RemoteRteConfig,
} from "./ansibleforms";
export {
  ExecGatewayAuthorizer,
  ExecGatewayExposureKind,
  RecordingsAccessMode,
  ExecGatewayLogLevel,
  type ExecGatewayName,
  type ExecGatewayOrigin,
  type ExecGatewayOidcAlgorithm,
  type ExecGatewayProxyAddress,
  type ConfigMapKeyRef,
  type ExecGatewayWebhookArgs,
  type ExecGatewayOidcArgs,
  type ExecGatewayExposureArgs,
  type ExecGatewayAutoscalingArgs,
  type ExecGatewayRecordingsS3Args,
  type ExecGatewayRecordingsArgs,
  type ExecGatewayDebugContainersArgs,
  type ExecGatewaySettings,
  type ExecGatewayArgs,
} from "./exec-gateway/args";
export { ExecGateway } from "./exec-gateway/exec-gateway";
export type {
  NamespaceName,
  ImageName,
  ExecGatewayWebhookConfig,
  ExecGatewayConfig,
  ExecGatewayDebugContainersConfig,
  ExecGatewayRecordingsS3Config,
  ExecGatewayRecordingsConfig,
} from "./exec-gateway/config";
export { type ImageSettings, ImagePullPolicy, type SecretName, type GlobalSettings } from "./shared/image";
export {
  NetworkProtocol,
  type MatchLabels,
  type IpBlock,
  type NetworkPolicyPeer,
  type NetworkPolicyPort,
  type NetworkPolicyEgressRule,
  type InClusterPeer,
} from "./shared/network";
export type { KubernetesFields, TopologySpreadConstraint, ContainerResources, PodSettings } from "./shared/pod";
export type { SecretKeyRef } from "./shared/secret";
export type { MonitoringArgs, ScrapeMonitorArgs, PrometheusRuleArgs } from "./shared/monitoring";
export type { ValueOf } from "./shared/enum";
export {
  ConnectGatewayServiceType,
  type ConnectGatewayAutoscaling,
  type ConnectGatewayTls,
  type ConnectGatewayArgs,
  type ConnectGatewayWorkspace,
  ConnectGateway,
} from "./ssh/connect-gateway";
export type { ConnectGatewayRegistration } from "./ssh/contract";
export type {
  ConnectGatewayConfig,
  SourceRange,
  AuthorizedKey,
  SshWorkspaceConfig,
  NetworkPeersConfig,
  WorkspaceDefaultsConfig,
} from "./ssh/config";
export {
  SshWorkspaceTcpForwarding,
  SshWorkspaceDisruption,
  type SshWorkspaceStorage,
  type SecretKeyReference,
  type SshWorkspaceArgs,
  SshWorkspace,
} from "./ssh/ssh-workspace";
