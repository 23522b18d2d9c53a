// What the gateway's pod is told: its settings document (config.json) and its env.
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { SecretKeyRef } from "../shared/secret";
import type { ExecGatewayArgs, ExecGatewayWebhookArgs } from "./args";
import {
  EXEC_GATEWAY_CONFIG_DIR,
  EXEC_GATEWAY_CONFIG_FILE,
  EXEC_GATEWAY_METRICS_PORT,
  EXEC_GATEWAY_PORT,
  EXEC_GATEWAY_RECORD_DIR,
  EXPOSURE_PROXY_HOPS,
} from "./contract";
import { WEBHOOK_ONE_OF } from "./validate";

/** The gateway's own default (gateway/src/config.ts), set when the webhook is known only as an Output. */
const WEBHOOK_DEFAULT_TIMEOUT_MS = 3000;

/**
 * The webhook URL for the Secret the component writes. Pulumi's provider host hands an object
 * input that holds a secret (webhook.url from a Python or YAML program) over as one secret Output
 * of the whole object, whose fields are known only inside it; such a webhook must carry `url`.
 * @internal
 */
export function webhookUrl(
  webhook: ExecGatewayWebhookArgs | pulumi.Output<ExecGatewayWebhookArgs>,
): pulumi.Input<string> {
  if (!pulumi.Output.isInstance(webhook)) return webhook.url!;
  return webhook.apply((value) => {
    if (value?.url === undefined || value.urlSecret !== undefined)
      throw new Error(`${WEBHOOK_ONE_OF}; from a secret object input, give url`);
    return pulumi.output(value.url);
  });
}

/**
 * The gateway's settings as one document, config.json in its ConfigMap (the gateway reads the file
 * ENTRYWAY_CONFIG names; gateway/src/config.ts refuses unknown keys and wrong types). Its keys are
 * the gateway's own: `settings` as given (ExecGatewaySettings has the gateway's names), the rest
 * from the args. Nothing secret goes in (the webhook URL, S3 credentials: gatewayEnv). The chart's
 * entryway.execGateway.config makes the same document, and helmToJson the same bytes.
 * @internal
 */
export function execGatewayConfig(args: ExecGatewayArgs): Record<string, pulumi.Input<unknown>> {
  const authorizer = args.authorizer ?? "kubernetes";
  const config: Record<string, pulumi.Input<unknown>> = {
    host: "0.0.0.0",
    port: EXEC_GATEWAY_PORT,
    metricsPort: EXEC_GATEWAY_METRICS_PORT,
    backend: "kubernetes",
    authorizer,
  };
  if (args.refusedNamespaces?.length) config.refusedNamespaces = args.refusedNamespaces;
  if (authorizer === "webhook") {
    const webhook = args.webhook as ExecGatewayWebhookArgs | pulumi.Output<ExecGatewayWebhookArgs> | undefined;
    // A webhook from a secret object is known only inside it; its timeout is no secret.
    if (pulumi.Output.isInstance(webhook))
      config.webhookTimeoutMs = pulumi.unsecret(webhook.apply((w) => w.timeoutMs ?? WEBHOOK_DEFAULT_TIMEOUT_MS));
    else if (webhook?.timeoutMs !== undefined) config.webhookTimeoutMs = webhook.timeoutMs;
  }
  const oidc = authorizer === "oidc" ? args.oidc : undefined;
  if (oidc) {
    Object.assign(config, { oidcIssuer: oidc.issuer, oidcAudience: oidc.audience });
    if (oidc.jwksUri) config.oidcJwksUri = oidc.jwksUri;
    if (oidc.usernameClaim) config.oidcUsernameClaim = oidc.usernameClaim;
    if (oidc.namespacesClaim) config.oidcNamespacesClaim = oidc.namespacesClaim;
    if (oidc.groupsClaim) config.oidcGroupsClaim = oidc.groupsClaim;
    if (oidc.maxTokenAgeSeconds !== undefined) config.oidcMaxTokenAgeSeconds = oidc.maxTokenAgeSeconds;
    if (oidc.algorithms) config.oidcAlgorithms = oidc.algorithms;
  }
  const settings = args.settings ?? {};
  Object.assign(config, settings);
  // Behind the proxy exposure routes through, every client would otherwise have the proxy's address
  // and share one set of per-address limits. That proxy (an Istio ingress gateway, or ingress-nginx)
  // appends the address it saw to X-Forwarded-For (istio.io network-topologies; ingress-nginx
  // nginx.tmpl sets it to $remote_addr), so the client is the last address there.
  if (args.exposure && settings.trustedProxies === undefined && settings.trustedProxyHops === undefined)
    config.trustedProxyHops = EXPOSURE_PROXY_HOPS;
  // Browsers may open sessions only from the public host's pages unless told otherwise.
  if (args.exposure && settings.allowedOrigins === undefined) config.allowedOrigins = [`https://${args.exposure.host}`];
  const s3 = args.recordings?.s3;
  if (s3) {
    config.recordS3Bucket = s3.bucket;
    if (s3.endpoint) config.recordS3Endpoint = s3.endpoint;
    if (s3.region) config.recordS3Region = s3.region;
    if (s3.prefix) config.recordS3Prefix = s3.prefix;
    if (s3.forcePathStyle) config.recordS3ForcePathStyle = true;
  } else if (args.recordings) {
    Object.assign(config, {
      recordDir: EXEC_GATEWAY_RECORD_DIR,
      recordRetentionDays: args.recordings.retentionDays ?? 30,
    });
  }
  if (args.debugContainers) {
    config.debugImages = args.debugContainers.images;
    if (args.debugContainers.defaultImage) config.debugDefaultImage = args.debugContainers.defaultImage;
  }
  return config;
}

/**
 * The env a gateway pod gets (the chart's template makes the same list): where its settings
 * document is, its namespace from the downward API, and what is secret, from Secrets.
 * @internal
 */
export function gatewayEnv(
  args: ExecGatewayArgs,
  webhookSecret: SecretKeyRef | undefined,
): k8s.types.input.core.v1.EnvVar[] {
  const env: k8s.types.input.core.v1.EnvVar[] = [
    { name: "ENTRYWAY_CONFIG", value: `${EXEC_GATEWAY_CONFIG_DIR}/${EXEC_GATEWAY_CONFIG_FILE}` },
    // The downward API: targets in the gateway's own namespace are refused at request time.
    { name: "ENTRYWAY_GATEWAY_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
  ];
  if (webhookSecret)
    env.push({
      name: "ENTRYWAY_WEBHOOK_URL",
      valueFrom: { secretKeyRef: { name: webhookSecret.name, key: webhookSecret.key } },
    });
  // The AWS SDK's default chain reads these; without the Secret the pod's identity takes their place.
  const credentials = args.recordings?.s3?.credentialsSecret;
  if (credentials) {
    for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
      env.push({ name: key, valueFrom: { secretKeyRef: { name: credentials, key } } });
  }
  return env;
}
