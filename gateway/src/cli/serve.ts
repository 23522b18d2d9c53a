// `entryway serve`: the gateway service. Configuration comes from the environment and ENTRYWAY_CONFIG
// (gateway/README.md); SIGTERM and SIGINT drain open sessions before exiting.
import { createAuthorizer } from "../auth/index.js";
import { dockerBackend } from "../backends/docker.js";
import { kubernetesBackend, loadKubeConfig } from "../backends/kubernetes.js";
import { loadConfig, type GatewayConfig } from "../config.js";
import { parseCommand } from "./args.js";
import { ExitCode } from "./exit-codes.js";
import { jsonLogger } from "../log.js";
import { createGateway } from "../server.js";
import { webAssets } from "../web-assets.js";
import type { KubeConfig } from "@kubernetes/client-node";
import type { AddressInfo } from "node:net";

const USAGE =
  "usage: entryway serve\n\nRuns the exec gateway. Every setting is an ENTRYWAY_* environment variable or a key of the JSON file named by ENTRYWAY_CONFIG (see gateway/README.md).\n";

/** Its settings are environment variables: no options but -h/--help. */
export const options = {} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("serve", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  let config: GatewayConfig;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`entryway serve: ${(error as Error).message}\n`);
    return ExitCode.config;
  }
  const logger = jsonLogger(config.logLevel);
  let kubeConfig: KubeConfig | undefined;
  const kube = () => (kubeConfig ??= loadKubeConfig(config.kubeconfig));
  const backend = config.backend === "docker" ? dockerBackend(config.dockerHost) : kubernetesBackend(kube());
  const gateway = createGateway({
    config,
    backend,
    authorizer: createAuthorizer(config, kube),
    logger,
    routes: [webAssets({ config, logger })],
  });
  const address = await gateway.listen();
  const monitoring = gateway.monitoringServer.address() as AddressInfo;
  logger.log("info", "listening", {
    address: address.address,
    port: address.port,
    metricsPort: monitoring.port,
    path: config.path,
    backend: config.backend,
    authorizer: config.authorizer,
  });
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      logger.log("info", "stopping", { signal });
      gateway.shutdown().then(() => resolve(0));
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}
