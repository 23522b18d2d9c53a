/**
 * The exec gateway in this process with its `kubernetes` backend and authorizer, as the tests that
 * reach an API server run it (the real one in test/real, the stand-in in gateway/test/clients/kube.test.ts):
 * on a free loopback port, its audit records dropped.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { kubernetesAuthorizer } from "../../gateway/src/auth/kubernetes.js";
import { kubernetesBackend } from "../../gateway/src/backends/kubernetes.js";
import { defaultConfig, type GatewayConfig } from "../../gateway/src/config.js";
import type { RouteHandler } from "../../gateway/src/http-route.js";
import type { Logger } from "../../gateway/src/log.js";
import { createGateway, type Gateway } from "../../gateway/src/server.js";

export interface KubernetesGatewayOptions {
  /** Settings over the defaults (and over host 127.0.0.1, port 0, log level warn). */
  readonly settings?: Partial<GatewayConfig>;
  /** Where log lines go (nowhere unless given). */
  readonly logger?: Logger;
  /** Extra HTTP routes, made from the gateway's config. */
  readonly routes?: (config: GatewayConfig) => RouteHandler[];
}

/** A gateway whose backend and authorizer act as `kubeConfig`'s user (its ServiceAccount's token). */
export function kubernetesGateway(kubeConfig: KubeConfig, options: KubernetesGatewayOptions = {}): Gateway {
  const config: GatewayConfig = {
    ...defaultConfig,
    host: "127.0.0.1",
    port: 0,
    backend: "kubernetes",
    authorizer: "kubernetes",
    logLevel: "warn",
    ...options.settings,
  };
  return createGateway({
    config,
    backend: kubernetesBackend(kubeConfig),
    authorizer: kubernetesAuthorizer(kubeConfig, defaultConfig.tokenAudiences),
    logger: options.logger ?? { log: () => {} },
    audit: { write: () => {}, close: async () => {} },
    routes: options.routes?.(config),
  });
}
