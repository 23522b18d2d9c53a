/**
 * Config mounted by subPath (ansible.cfg) never reaches a running container, and a CA bundle is
 * read once at start (NODE_EXTRA_CA_CERTS): both front ends put a sha256 of each such file on the
 * pod template, so a change rolls the pods. The hash must be over the bytes the ConfigMap mounts,
 * and it must move when they change.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { parseStackConfig, Stack, type StackConfig } from "../../components/stack";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";
import { find, podSpec } from "./helpers";

const chart = path.join(repoRoot, "charts/entryway");
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-af-rollout-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

const OTHER_CFG = "[defaults]\nforks = 20\n";

/** The pod template's checksum annotations, and the file each one must hash (from the ConfigMap the pod mounts). */
function checksums(
  objects: readonly ObjectLike[],
  kind: string,
  name: string,
): { annotations: Record<string, string>; mounted: Record<string, string> } {
  const workload = find(objects, kind, name) as unknown as {
    spec: { template: { metadata: { annotations?: Record<string, string> } } };
  };
  const pod = podSpec(workload as unknown as ObjectLike);
  const mounted: Record<string, string> = {};
  for (const [volume, key, file] of [
    ["rte-ansible-cfg", "ansible.cfg", "ansible-cfg"],
    ["rte-ca", "ca.crt", "ca-bundle"],
  ] as const) {
    const configMap = pod.volumes?.find((v) => v.name === volume)?.configMap?.name;
    if (configMap)
      mounted[file] = (find(objects, "ConfigMap", configMap) as unknown as { data: Record<string, string> }).data[key];
  }
  return { annotations: workload.spec.template.metadata.annotations ?? {}, mounted };
}

/** ansible.cfg changed, the CA bundle did not: only the first's hash moves. */
function expectOnlyAnsibleCfgMoved(before: ReturnType<typeof checksums>, after: ReturnType<typeof checksums>): void {
  expect(after.annotations["checksum/ansible-cfg"]).not.toBe(before.annotations["checksum/ansible-cfg"]);
  expect(after.annotations["checksum/ca-bundle"]).toBe(before.annotations["checksum/ca-bundle"]);
}

function expectHashesOfMountedFiles(found: ReturnType<typeof checksums>, files: string[]): void {
  expect(Object.keys(found.mounted).sort()).toEqual([...files].sort());
  for (const file of files) expect(found.annotations[`checksum/${file}`], file).toBe(sha256(found.mounted[file]));
}

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("chart (%s)", (_label, helm) => {
  const template = (scenario: string, extra?: unknown) => {
    const files = [path.join(chart, "ci", scenario)];
    if (extra) {
      files.push(path.join(scratch, `${helm.major}-${files.length}-${Math.random().toString(36).slice(2)}.yaml`));
      writeFileSync(files[1], stringify(extra));
    }
    return helmTemplate(helm, chart, { valuesFiles: files });
  };

  it("the app pod carries the sha256 of the mounted ansible.cfg, and it moves when ansible.cfg changes", () => {
    const before = checksums(template("ansibleforms-sidecar.yaml"), "Deployment", "entryway-ansibleforms");
    expectHashesOfMountedFiles(before, ["ansible-cfg"]);
    const after = checksums(
      template("ansibleforms-sidecar.yaml", { ansibleForms: { rte: { ansibleCfg: OTHER_CFG } } }),
      "Deployment",
      "entryway-ansibleforms",
    );
    expectHashesOfMountedFiles(after, ["ansible-cfg"]);
    expect(after.annotations["checksum/ansible-cfg"]).not.toBe(before.annotations["checksum/ansible-cfg"]);
  });

  it("the remote RTE carries the CA bundle's and ansible.cfg's hashes; each moves with its file", () => {
    const before = checksums(
      template("ansibleforms-remote-rte.yaml", { remoteRte: { ansibleCfg: "[defaults]\n" } }),
      "StatefulSet",
      "entryway-remote-rte",
    );
    expectHashesOfMountedFiles(before, ["ansible-cfg", "ca-bundle"]);
    const after = checksums(
      template("ansibleforms-remote-rte.yaml", { remoteRte: { ansibleCfg: OTHER_CFG } }),
      "StatefulSet",
      "entryway-remote-rte",
    );
    expectOnlyAnsibleCfgMoved(before, after);
  });

  it("no mounted config, no annotation", () => {
    expect(checksums(template("ansibleforms-remote.yaml"), "Deployment", "entryway-ansibleforms").annotations).toEqual(
      {},
    );
  });
});

describe("components", () => {
  const stackFrom = (file: string, change?: (config: StackConfig) => void) => {
    const config = parseStackConfig(parse(readFileSync(path.join(repoRoot, "test/parity", file), "utf8")));
    change?.(config);
    return render(() => new Stack("rollout", config)).then((r) => r.manifests as ObjectLike[]);
  };

  it("the app pod carries the sha256 of the mounted ansible.cfg, and it moves when ansible.cfg changes", async () => {
    const before = checksums(await stackFrom("ansibleforms-sidecar.stack.yaml"), "Deployment", "entryway-ansibleforms");
    expectHashesOfMountedFiles(before, ["ansible-cfg"]);
    const after = checksums(
      await stackFrom("ansibleforms-sidecar.stack.yaml", (c) => (c.ansibleForms!.rte!.ansibleCfg = OTHER_CFG)),
      "Deployment",
      "entryway-ansibleforms",
    );
    expectHashesOfMountedFiles(after, ["ansible-cfg"]);
    expect(after.annotations["checksum/ansible-cfg"]).not.toBe(before.annotations["checksum/ansible-cfg"]);
  });

  it("the RemoteRte carries the CA bundle's and ansible.cfg's hashes; each moves with its file", async () => {
    const before = checksums(
      await stackFrom("ansibleforms-remote-rte.stack.yaml", (c) => (c.remoteRte!.ansibleCfg = "[defaults]\n")),
      "StatefulSet",
      "entryway-remote-rte",
    );
    expectHashesOfMountedFiles(before, ["ansible-cfg", "ca-bundle"]);
    const after = checksums(
      await stackFrom("ansibleforms-remote-rte.stack.yaml", (c) => (c.remoteRte!.ansibleCfg = OTHER_CFG)),
      "StatefulSet",
      "entryway-remote-rte",
    );
    expectOnlyAnsibleCfgMoved(before, after);
  });
});
