// The checks of AnsibleForms' settings alone, as the chart's templates/ansibleforms/ check its values.
import { APP_PORT, rteSettingsProblems, SIDECAR_RTE_PORT, tokenProblems } from "./common";
import { COMPONENT_APP_ENV } from "./contract";
import type { AnsibleFormsArgs } from "./args";

const RESERVED_ENV = new Set<string>(COMPONENT_APP_ENV);

/**
 * Every input mistake in the settings alone, one line each naming `where`.
 * @internal
 */
export function settingsProblems(args: AnsibleFormsArgs, where: string): string[] {
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
