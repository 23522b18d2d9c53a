/**
 * The shipped stack configurations (Pulumi.<stack>.yaml), read as `pulumi up` reads them, with the
 * settings this control plane needs: it has no load balancer and no ingress controller, so the
 * CONNECT gateway's Service and AnsibleForms' Ingress are told not to wait for an address
 * (pulumi.com/skipAwait, through the stack's own connectGateway.serviceAnnotations and
 * ansibleForms.expose.annotations: a config change, as a user makes it, never a program edit).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { repoRoot } from "./helm";

export type StackDocument = Record<string, unknown> & {
  namespace?: string;
  connectGateway?: Record<string, unknown>;
  ansibleForms?: Record<string, unknown> & { expose?: Record<string, unknown> };
  execGateway?: Record<string, unknown> & { targetNamespaces?: string[] };
  workspaces?: Record<string, unknown>[];
};

/** The `entryway:stack` object of Pulumi.<stack>.yaml. */
export function shippedStack(stack: string): StackDocument {
  const document = parse(readFileSync(path.join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as {
    config: Record<string, unknown>;
  };
  return structuredClone(document.config["entryway:stack"]) as StackDocument;
}

const SKIP_AWAIT = { "pulumi.com/skipAwait": "true" };

/** No load balancer and no ingress controller on this control plane: nothing waits for an address. */
export function withoutAddressWaits(stack: StackDocument): StackDocument {
  const result = structuredClone(stack);
  if (result.connectGateway) {
    result.connectGateway.serviceAnnotations = {
      ...(result.connectGateway.serviceAnnotations as Record<string, string> | undefined),
      ...SKIP_AWAIT,
    };
  }
  if (result.ansibleForms?.expose) {
    result.ansibleForms.expose.annotations = {
      ...(result.ansibleForms.expose.annotations as Record<string, string> | undefined),
      ...SKIP_AWAIT,
    };
  }
  return result;
}

/** The config map of a Pulumi.<stack>.yaml holding this stack object. */
export function stackConfig(stack: StackDocument): Record<string, unknown> {
  return { "entryway:stack": stack };
}
