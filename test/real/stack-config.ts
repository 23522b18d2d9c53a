/**
 * The shipped stack configurations (Pulumi.<stack>.yaml), read as `pulumi up` reads them, with the
 * one setting this control plane needs: it has no load balancer, so the CONNECT gateway's Service
 * is told not to wait for one (pulumi.com/skipAwait, through the stack's own
 * connectGateway.serviceAnnotations: a config change, as a user makes it, never a program edit).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

export type StackDocument = Record<string, unknown> & {
  namespace?: string;
  connectGateway?: Record<string, unknown>;
  workspaces?: Record<string, unknown>[];
};

/** The `entryway:stack` object of Pulumi.<stack>.yaml. */
export function shippedStack(stack: string): StackDocument {
  const document = parse(readFileSync(path.join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as { config: Record<string, unknown> };
  return structuredClone(document.config["entryway:stack"]) as StackDocument;
}

/** No load balancer on this control plane: the CONNECT gateway's Service does not wait for one. */
export function withoutLoadBalancer(stack: StackDocument): StackDocument {
  if (!stack.connectGateway) return stack;
  const annotations = (stack.connectGateway.serviceAnnotations ?? {}) as Record<string, string>;
  return { ...stack, connectGateway: { ...stack.connectGateway, serviceAnnotations: { ...annotations, "pulumi.com/skipAwait": "true" } } };
}

/** The config map of a Pulumi.<stack>.yaml holding this stack object. */
export function stackConfig(stack: StackDocument): Record<string, unknown> {
  return { "entryway:stack": stack };
}
