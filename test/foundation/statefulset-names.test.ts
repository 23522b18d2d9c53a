/**
 * StatefulSet names fit the pods' controller-revision-hash label (<name>-<hash of up to 10>, at
 * most 63 characters: components/shared/names.ts cites the Kubernetes source), in both front
 * ends: with the longest base name the chart allows (40 characters), every StatefulSet (the
 * built-in MySQL, the outbound RTE, an SSH workspace) is at most 52 characters, and the Pulumi
 * components name it exactly as the chart does.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { MAX_STATEFULSET_NAME, objectName } from "../../components/shared/names";
import { parseStackConfig, Stack } from "../../components/stack";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";

const base = "r".repeat(40);
const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e alice@laptop";
const workspace = { name: "alice-with-a-long-name", authorizedKeys: [KEY] };
const forms = { existingSecrets: { keys: "forms-keys", database: "forms-db", rteToken: "forms-rte-token" } };
const remote = { appUrl: "https://forms.example.com", existingTokenSecret: "forms-rte-token" };
/** The longest revision hash: a uint32 in decimal (HashControllerRevision). */
const LONGEST_HASH = String(2 ** 32 - 1);

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-sts-names-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const values = path.join(scratch, "values.yaml");
writeFileSync(
  values,
  stringify({
    ansibleForms: { enabled: true, ...forms },
    remoteRte: { enabled: true, ...remote },
    connectGateway: { enabled: true, hostname: "ssh.example.com" },
    workspaces: [workspace],
  }),
);

const stackConfig = () =>
  parseStackConfig({
    name: base,
    namespace: "entryway",
    createNamespace: false,
    ansibleForms: forms,
    remoteRte: remote,
    connectGateway: { hostname: "ssh.example.com" },
    workspaces: [workspace],
  });
const statefulSets = (objects: readonly ObjectLike[]) =>
  objects
    .filter((o) => o.kind === "StatefulSet")
    .map((o) => o.metadata!.name!)
    .sort();

describe("StatefulSet names under a 40-character base", () => {
  it("would be too long without the cap (the input exercises it)", () => {
    expect(objectName(base, "ansibleforms-mysql").length).toBeGreaterThan(MAX_STATEFULSET_NAME);
    expect(objectName(base, "ws", workspace.name).length).toBeGreaterThan(MAX_STATEFULSET_NAME);
  });

  it("Pulumi: every StatefulSet, its Service and serviceName fit the revision label", async () => {
    const { manifests } = await render(() => new Stack("names", stackConfig()));
    const names = statefulSets(manifests as ObjectLike[]);
    expect(names).toHaveLength(3);
    for (const name of names) {
      expect(`${name}-${LONGEST_HASH}`.length, name).toBeLessThanOrEqual(63);
      const set = (manifests as ObjectLike[]).find(
        (o) => o.kind === "StatefulSet" && o.metadata?.name === name,
      ) as ObjectLike & { spec: { serviceName: string } };
      expect(set.spec.serviceName).toBe(name);
    }
  });

  it.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
    "%s names them as the Pulumi components do",
    async (_label, helm) => {
      const fromHelm = helmTemplate(helm, path.join(repoRoot, "charts/entryway"), {
        valuesFiles: [values],
        releaseName: base,
      });
      const { manifests } = await render(() => new Stack("names", stackConfig()));
      expect(statefulSets(fromHelm)).toEqual(statefulSets(manifests as ObjectLike[]));
      for (const name of statefulSets(fromHelm)) expect(name.length, name).toBeLessThanOrEqual(MAX_STATEFULSET_NAME);
      // The app reaches MySQL by its (capped) Service name, which is the StatefulSet's.
      const app = fromHelm.find(
        (o) => o.kind === "Deployment" && o.metadata?.name?.includes("ansibleforms"),
      ) as ObjectLike & {
        spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
      };
      const mysql = app.spec.template.spec.containers[0].env?.find((e) => e.name === "DB_HOST")?.value;
      expect(statefulSets(fromHelm)).toContain(mysql);
      expect(fromHelm.some((o) => o.kind === "Service" && o.metadata?.name === mysql)).toBe(true);
    },
  );
});
