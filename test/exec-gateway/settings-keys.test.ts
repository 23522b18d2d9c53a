import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultConfig, loadConfig, type GatewayConfig } from "../../gateway/src/config";
import { execGatewayProblems } from "../../components/exec-gateway";
import { repoRoot } from "../../testkit/harness/helm";

type Properties = Record<string, { type?: string; default?: unknown }>;
const json = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), "utf8"));

/**
 * The gateway's settings a user does not set as they are, each with why: the front ends write them
 * from other arguments (execGatewayConfig, entryway.execGateway.config), the deployment fixes them,
 * or they are secret. Every other key of the gateway's defaultConfig must be in ExecGatewaySettings.
 */
const NOT_SETTINGS: Partial<Record<keyof GatewayConfig, string>> = {
  host: "the front ends listen on all addresses of the pod (0.0.0.0)",
  port: "the container port the Service, probes and NetworkPolicy name (contract.json)",
  metricsHost: "the kubelet's readiness probe and Prometheus reach it from outside the pod: all addresses",
  metricsPort: "the metrics port the Service, probes and NetworkPolicy name (contract.json)",
  path: "the exposure's routes and clients use the contract's path (EXEC_GATEWAY_PATH)",
  backend: "the front ends deploy into Kubernetes: always kubernetes",
  dockerHost: "the docker backend only, which the front ends never deploy",
  kubeconfig: "in-cluster: the pod's service account",
  gatewayNamespace: "the downward API's metadata.namespace (env ENTRYWAY_GATEWAY_NAMESPACE)",
  refusedNamespaces: "the stack's other namespaces (allowOwnedNamespaces decides)",
  authorizer: "the authorizer argument / value",
  webhookUrl: "secret: a Secret's key, as env ENTRYWAY_WEBHOOK_URL, never in the ConfigMap",
  webhookTimeoutMs: "webhook.timeoutMs",
  oidcIssuer: "oidc.issuer",
  oidcAudience: "oidc.audience",
  oidcJwksUri: "oidc.jwksUri",
  oidcUsernameClaim: "oidc.usernameClaim",
  oidcNamespacesClaim: "oidc.namespacesClaim",
  oidcGroupsClaim: "oidc.groupsClaim",
  oidcAlgorithms: "oidc.algorithms",
  oidcMaxTokenAgeSeconds: "oidc.maxTokenAgeSeconds",
  drainTimeoutMs:
    "must stay under the pod's terminationGracePeriodSeconds (30 s, no setting) or the drain is SIGKILLed: the default 10 s",
  auditFile: "the root filesystem is read-only: the audit goes to stdout, to the cluster's log collection",
  recordDir: "recordings: the volume's mount path",
  recordRetentionDays: "recordings.retentionDays",
  recordS3Bucket: "recordings.s3.bucket",
  recordS3Endpoint: "recordings.s3.endpoint",
  recordS3Region: "recordings.s3.region",
  recordS3Prefix: "recordings.s3.prefix",
  recordS3ForcePathStyle: "recordings.s3.forcePathStyle",
  debugImages: "debugContainers.images (it also grants patch on pods/ephemeralcontainers)",
  debugDefaultImage: "debugContainers.defaultImage",
};

const settingsSchema = json("components/exec-gateway/settings.schema.json") as { properties: Properties };
const settable = Object.keys(settingsSchema.properties).sort();
const jsonType = (value: unknown) => (Array.isArray(value) ? "array" : typeof value);

describe("the exec gateway's settings, one list for the gateway and both front ends", () => {
  it("lets users set every setting of the gateway (defaultConfig) but those the front ends derive, fix or keep secret", () => {
    const gatewayKeys = Object.keys(defaultConfig).sort();
    expect(settable.length).toBeGreaterThan(20);
    expect(settable.filter((key) => Object.hasOwn(NOT_SETTINGS, key))).toEqual([]);
    expect([...settable, ...Object.keys(NOT_SETTINGS)].sort()).toEqual(gatewayKeys);
  });

  it("gives every setting the gateway's JSON type and default", () => {
    for (const key of settable) {
      const property = settingsSchema.properties[key]!;
      const value = defaultConfig[key as keyof GatewayConfig];
      expect([key, property.default]).toEqual([key, value]);
      // The gateway takes any number where it has one; the schema may ask for an integer.
      const type = property.type === "integer" ? "number" : (property.type ?? "string");
      expect([key, type]).toEqual([key, jsonType(value)]);
    }
  });

  it.each([
    [
      "the component's package schema (schema.json)",
      () => Object.keys(json("schema.json").types["entryway:index:ExecGatewaySettings"].properties),
    ],
    [
      "the stack config's schema",
      () => Object.keys(json("components/stack/config.schema.json").definitions.ExecGatewaySettings.properties),
    ],
    [
      "the chart's values.schema.json",
      () =>
        Object.keys(json("charts/entryway/values.schema.json").properties.execGateway.properties.settings.properties),
    ],
  ])("has the same keys in %s, which refuses any other", (_where, keys) => {
    expect(keys().sort()).toEqual(settable);
  });

  describe("cross-field rules: the component refuses what the gateway refuses, and takes what it takes", () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-settings-"));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    const gatewayTakes = (settings: Record<string, unknown>) => {
      const file = path.join(scratch, "config.json");
      writeFileSync(file, JSON.stringify(settings));
      try {
        loadConfig({ ENTRYWAY_CONFIG: file });
        return true;
      } catch {
        return false;
      }
    };
    it.each([
      [{ reapGraceSeconds: 20 }, false],
      [{ reapGraceSeconds: 20, reapTimeoutMs: 20000 }, false],
      [{ reapGraceSeconds: 20, reapTimeoutMs: 20001 }, true],
      [{ reapTimeoutMs: 2000 }, false],
      [{ reapTimeoutMs: 2001 }, true],
      [{ bufferLowBytes: 2_000_000 }, false],
      [{ bufferLowBytes: 2_000_000, bufferHighBytes: 2_000_000 }, true],
      [{ bufferHighBytes: 1000 }, false],
    ])("%j: taken %s", (settings, taken) => {
      expect(gatewayTakes(settings)).toBe(taken);
      const problems = execGatewayProblems({ namespace: "entryway", targetNamespaces: ["a"], settings });
      expect(problems.length === 0).toBe(taken);
    });
  });
});
