// The checks of ExecGateway's args, as the chart's entryway.execGateway.validate makes them of its values.
import * as pulumi from "@pulumi/pulumi";
import Ajv from "ajv";
import { schemaProblems } from "../shared/schema";
import type { ExecGatewayArgs, ExecGatewaySettings } from "./args";
import settingsSchema from "./settings.schema.json";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/;
/** As the gateway checks them (gateway/src/config.ts): S3's bucket names, https endpoints, safe key characters. */
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const S3_ENDPOINT = /^https:\/\/[^/\s:@]+(:[0-9]{1,5})?\/?$/;
const S3_PREFIX = /^([A-Za-z0-9!_.*'()-][A-Za-z0-9!_.*'()/-]{0,511})?$/;
const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/**
 * Every reason the args cannot make a working, least-privilege gateway, one line each (empty when
 * they can), as the chart's entryway.execGateway.validate checks its values. Exported for the
 * settings drift test. @internal
 */
export function execGatewayProblems(args: ExecGatewayArgs): string[] {
  const problems: string[] = [];
  const targets = args.targetNamespaces ?? [];
  if (targets.length === 0 && !args.clusterWide) {
    problems.push(
      "targetNamespaces is empty: name the namespaces the gateway may enter (or set clusterWide: true explicitly)",
    );
  }
  for (const ns of targets) {
    if (ns === "*") problems.push("targetNamespaces: no wildcards; use clusterWide: true to enter every namespace");
    else if (!DNS_LABEL.test(ns)) problems.push(`targetNamespaces: "${ns}" is not a namespace name`);
  }
  if (new Set(targets).size !== targets.length) problems.push("targetNamespaces has duplicates");
  if (typeof args.namespace === "string") problems.push(...ownNamespaceProblems(args.namespace, targets));
  for (const ns of targets) {
    if (args.refusedNamespaces?.includes(ns))
      problems.push(
        `targetNamespaces includes "${ns}", a namespace the stack owns (refusedNamespaces): exec there reaches pods whose service accounts hold the stack's keys`,
      );
  }
  const authorizer = args.authorizer ?? "kubernetes";
  if (!["kubernetes", "webhook", "oidc"].includes(authorizer))
    problems.push(`authorizer "${authorizer}" is not kubernetes, webhook or oidc`);
  // A webhook that arrives as one secret Output is checked when its value is known (webhookUrl).
  if (authorizer === "webhook" && !pulumi.Output.isInstance(args.webhook)) {
    if (!args.webhook || (args.webhook.url === undefined) === (args.webhook.urlSecret === undefined))
      problems.push(WEBHOOK_ONE_OF);
  }
  if (authorizer === "oidc" && (!args.oidc?.issuer || !args.oidc.audience)) {
    problems.push('authorizer "oidc" needs oidc.issuer and oidc.audience');
  }
  // Whoever can change the issuer's answers on the way can hand the gateway a signing key of their own.
  for (const [field, url] of [
    ["oidc.issuer", args.oidc?.issuer],
    ["oidc.jwksUri", args.oidc?.jwksUri],
  ] as const) {
    if (authorizer === "oidc" && url && !isHttpsOrLoopback(url))
      problems.push(
        `${field} "${url}" must be https (plain http only to a loopback address): the keys that verify tokens come from there`,
      );
  }
  if (args.replicas !== undefined && (!Number.isInteger(args.replicas) || args.replicas < 1))
    problems.push("replicas must be an integer >= 1");
  if (args.runAsUser !== undefined && (!Number.isInteger(args.runAsUser) || args.runAsUser < 1)) {
    problems.push("runAsUser must be a non-root numeric user (>= 1)");
  }
  const hpa = args.autoscaling;
  if (hpa && (hpa.minReplicas < 1 || hpa.maxReplicas < hpa.minReplicas)) {
    problems.push("autoscaling needs 1 <= minReplicas <= maxReplicas");
  }
  const recordings = args.recordings;
  if (recordings?.s3) {
    const s3 = recordings.s3;
    const volumeSettings = (["size", "storageClassName", "accessMode", "retentionDays"] as const).filter(
      (key) => recordings[key] !== undefined,
    );
    if (volumeSettings.length > 0)
      problems.push(
        `recordings.${volumeSettings.join(", recordings.")} are for the recordings volume; with recordings.s3 there is none (a bucket lifecycle rule keeps the retention)`,
      );
    if (!S3_BUCKET.test(s3.bucket ?? ""))
      problems.push(
        `recordings.s3.bucket "${s3.bucket}" is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`,
      );
    if (s3.endpoint !== undefined && !S3_ENDPOINT.test(s3.endpoint))
      problems.push(
        `recordings.s3.endpoint "${s3.endpoint}" is not https://host[:port]: recordings hold what sessions showed`,
      );
    if (s3.prefix !== undefined && !S3_PREFIX.test(s3.prefix))
      problems.push(
        `recordings.s3.prefix "${s3.prefix}" is not a key prefix (letters, digits, !_.*'()/-; no leading /)`,
      );
    if (s3.credentialsSecret !== undefined && !DNS_SUBDOMAIN.test(s3.credentialsSecret))
      problems.push(`recordings.s3.credentialsSecret "${s3.credentialsSecret}" is not a Secret name`);
  } else if (recordings) {
    const accessMode = recordings.accessMode ?? "ReadWriteOnce";
    if (accessMode !== "ReadWriteOnce" && accessMode !== "ReadWriteMany")
      problems.push(`recordings.accessMode "${String(accessMode)}" is not ReadWriteOnce or ReadWriteMany`);
    if (accessMode === "ReadWriteOnce" && (hpa || (args.replicas ?? 2) !== 1)) {
      problems.push(
        "recordings on a ReadWriteOnce volume need replicas: 1 and no autoscaling (one node mounts it); use accessMode ReadWriteMany for more replicas",
      );
    }
    if (
      recordings.retentionDays !== undefined &&
      (!Number.isInteger(recordings.retentionDays) || recordings.retentionDays < 0)
    )
      problems.push("recordings.retentionDays must be an integer >= 0");
  }
  const debug = args.debugContainers;
  if (debug) {
    const images = Array.isArray(debug.images) ? debug.images : [];
    if (images.length === 0)
      problems.push("debugContainers.images is empty: name the images a debug container may run");
    for (const image of images)
      if (!/^\S+$/.test(image)) problems.push(`debugContainers.images: "${image}" is not an image reference`);
    if (new Set(images).size !== images.length) problems.push("debugContainers.images has duplicates");
    if (debug.defaultImage !== undefined && !images.includes(debug.defaultImage))
      problems.push(`debugContainers.defaultImage "${debug.defaultImage}" is not one of debugContainers.images`);
    if (authorizer !== "kubernetes")
      problems.push(
        'debugContainers need authorizer "kubernetes" (a SubjectAccessReview for patch pods/ephemeralcontainers)',
      );
    if (args.settings?.maxSessionSeconds === 0)
      problems.push("debugContainers need settings.maxSessionSeconds > 0 (a debug container lives that long)");
  }
  problems.push(...caProblems(args));
  problems.push(...settingsProblems(args.settings));
  const exposure = args.exposure;
  if (exposure) {
    if (exposure.kind !== "istio" && exposure.kind !== "ingress")
      problems.push(`exposure.kind "${String(exposure.kind)}" is not istio or ingress`);
    if (!HOSTNAME.test(exposure.host ?? "")) problems.push(`exposure.host "${exposure.host}" is not a host name`);
    if (!exposure.tlsSecretName)
      problems.push("exposure.tlsSecretName is required: the gateway is exposed with TLS only");
  }
  return problems;
}

/**
 * PEM certificates, and nothing else: one or more BEGIN/END CERTIFICATE blocks (base64 lines
 * between them), whitespace around them (config.ts's caBundle pattern). A private key, or any
 * other PEM block, does not match.
 */
const PEM_CERTIFICATES = /^(\s*-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=]+\r?\n)+-----END CERTIFICATE-----)+\s*$/;

/** caBundle or existingCaConfigMap, never both; PEM certificates only (a private key is refused, not mounted). */
function caProblems({ caBundle, existingCaConfigMap: existing }: ExecGatewayArgs): string[] {
  const problems: string[] = [];
  if (caBundle !== undefined && existing !== undefined)
    problems.push("give caBundle or existingCaConfigMap, not both: the gateway reads one CA bundle");
  if (caBundle !== undefined && (typeof caBundle !== "string" || !PEM_CERTIFICATES.test(caBundle)))
    problems.push(
      "caBundle is not PEM certificates: one or more -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- blocks and nothing else (no private key)",
    );
  if (existing !== undefined) {
    if (!DNS_SUBDOMAIN.test(existing?.name ?? ""))
      problems.push(`existingCaConfigMap.name "${existing?.name}" is not a ConfigMap name`);
    if (!/^[-._a-zA-Z0-9]+$/.test(existing?.key ?? ""))
      problems.push(`existingCaConfigMap.key "${existing?.key}" is not a ConfigMap key`);
  }
  return problems;
}

const validateSettings = new Ajv({ allErrors: true, strict: false }).compile<ExecGatewaySettings>(settingsSchema);

/**
 * `settings` as the gateway will take them (it refuses anything else at start, and so would
 * crash-loop): known keys with values of their type and range (settings.schema.json, generated from
 * ExecGatewaySettings), then the gateway's cross-field rules, a setting left out at the gateway's
 * default. TypeScript's types check a TypeScript program only; a YAML or Python program, or a stack
 * config, reaches here with whatever it wrote.
 */
function settingsProblems(settings: ExecGatewaySettings | undefined): string[] {
  if (settings === undefined) return [];
  if (!validateSettings(settings)) return schemaProblems(validateSettings.errors, "settings");
  const defaults = settingsSchema.properties;
  const problems: string[] = [];
  const grace = settings.reapGraceSeconds ?? defaults.reapGraceSeconds.default;
  const reapTimeout = settings.reapTimeoutMs ?? defaults.reapTimeoutMs.default;
  if (reapTimeout <= grace * 1000)
    problems.push(
      `settings.reapTimeoutMs (${reapTimeout}) must be longer than settings.reapGraceSeconds (${grace}) x 1000: the reaper waits that long before SIGKILL`,
    );
  const low = settings.bufferLowBytes ?? defaults.bufferLowBytes.default;
  const high = settings.bufferHighBytes ?? defaults.bufferHighBytes.default;
  if (low > high) problems.push(`settings.bufferLowBytes (${low}) must not exceed settings.bufferHighBytes (${high})`);
  return problems;
}

/**
 * Throws every problem of the args at once, one line each naming the gateway: a ResourceError on
 * `resource` (the engine reports it against that resource), else a plain Error (the Stack checks
 * before it makes the gateway).
 * @internal
 */
export function validateExecGatewayArgs(name: string, args: ExecGatewayArgs, resource?: pulumi.Resource): void {
  throwProblems(name, execGatewayProblems(args), resource);
}

/** @internal */
export function throwProblems(name: string, problems: string[], resource: pulumi.Resource | undefined): void {
  if (problems.length === 0) return;
  const message = problems.map((problem) => `ExecGateway ${name}: ${problem}`).join("\n");
  throw resource ? new pulumi.ResourceError(message, resource) : new Error(message);
}

/** https, or plain http to a loopback address (the gateway's rule for its OIDC and webhook URLs). */
function isHttpsOrLoopback(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (
    parsed.protocol === "https:" ||
    (parsed.protocol === "http:" &&
      (parsed.hostname === "localhost" || parsed.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(parsed.hostname)))
  );
}

/**
 * The gateway's own namespace is never a target: exec there reaches the gateway's pods and their
 * service-account token (TokenReview and SubjectAccessReview cluster-wide), past the gateway's audit.
 * @internal
 */
export function ownNamespaceProblems(namespace: string, targets: string[]): string[] {
  return targets.includes(namespace)
    ? [
        `targetNamespaces includes "${namespace}", the gateway's own namespace; run the targets in a namespace of their own`,
      ]
    : [];
}

/** @internal */
export const WEBHOOK_ONE_OF = 'authorizer "webhook" needs exactly one of webhook.url or webhook.urlSecret';
