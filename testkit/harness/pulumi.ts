/** Pulumi test harness: run a program under the recording mocks and read what it made. */
import * as pulumi from "@pulumi/pulumi";
import { runProgram, setOfflineConfig, type RecordedResource } from "../offline/runtime";
import { toManifests, type Manifest } from "../offline/manifests";

export type { RecordedResource, Manifest };

export interface Rendered {
  readonly resources: RecordedResource[];
  /** Kubernetes objects, secrets redacted, in install order. */
  readonly manifests: Manifest[];
}

/**
 * Runs `program` with the given stack config (keys without the "entryway:" prefix are
 * prefixed; objects are passed as JSON, as the engine does).
 */
export async function render(program: () => unknown, config: Record<string, unknown> = {}): Promise<Rendered> {
  setOfflineConfig(
    Object.fromEntries(
      Object.entries(config).map(([key, value]) => [
        key.includes(":") ? key : `entryway:${key}`,
        typeof value === "string" ? value : JSON.stringify(value),
      ]),
    ),
  );
  const resources = await runProgram(program);
  return { resources, manifests: toManifests(resources) };
}

/** The value of an output (under mocks, outputs resolve once registration finishes). */
export function outputOf<T>(output: pulumi.Output<T> | pulumi.Input<T>): Promise<T> {
  return new Promise((resolve) => pulumi.output(output).apply((value) => resolve(value as T)));
}

/** Whether an output is marked secret. */
export function isSecretOutput(output: pulumi.Output<unknown>): Promise<boolean> {
  return pulumi.isSecret(output);
}

export function findManifest(manifests: readonly Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) {
    const have = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(", ");
    throw new Error(`no ${kind}/${name} among: ${have}`);
  }
  return found;
}

/** The resources whose parent is `urn`. */
export function childrenOf(resources: readonly RecordedResource[], urn: string): RecordedResource[] {
  return resources.filter((r) => r.parent === urn);
}
