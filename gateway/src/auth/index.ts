import type { KubeConfig } from "@kubernetes/client-node";
import type { GatewayConfig } from "../config.js";
import type { Authorizer } from "./authorizer.js";
import { kubernetesAuthorizer } from "./kubernetes.js";
import { oidcAuthorizer } from "./oidc.js";
import { webhookAuthorizer } from "./webhook.js";

export type { Authorizer, AuthRequest, Decision, Identity } from "./authorizer.js";

export function createAuthorizer(config: GatewayConfig, kubeConfig: () => KubeConfig): Authorizer {
  switch (config.authorizer) {
    case "webhook":
      return webhookAuthorizer(config.webhookUrl, config.webhookTimeoutMs);
    case "kubernetes":
      return kubernetesAuthorizer(kubeConfig(), config.tokenAudiences);
    case "oidc":
      return oidcAuthorizer({
        issuer: config.oidcIssuer,
        audience: config.oidcAudience,
        jwksUri: config.oidcJwksUri,
        usernameClaim: config.oidcUsernameClaim,
        namespacesClaim: config.oidcNamespacesClaim,
        groupsClaim: config.oidcGroupsClaim,
        algorithms: config.oidcAlgorithms,
        maxTokenAgeSeconds: config.oidcMaxTokenAgeSeconds,
      });
  }
}
