/**
 * `entryway-rte-boundary`: its good fixtures (it passes them) and bad ones (it fires on each, with
 * its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { appContainer, deployment, restrictedContainer, rteContainer, type Obj } from "../../test/policies/fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { rteBoundary } from "./rte-boundary";

describe("RTE boundary", () => {
  const secretRef = (name: string, key = "token") => ({ valueFrom: { secretKeyRef: { name, key } } });
  /** The deprecated database-mode RTE as the components render it: DB_* from a Secret, RTE_REGISTER=0, no RTE_MODE. */
  const databaseRte = (extraEnv: Obj[] = []) => ({
    ...rteContainer(),
    env: [
      { name: "RTE_TOKEN", ...secretRef("keys", "rte-token") },
      { name: "DB_HOST", value: "mysql" },
      { name: "DB_PASSWORD", ...secretRef("db", "password") },
      { name: "RTE_REGISTER", value: "0" },
      ...extraEnv,
    ],
  });
  /** The app and an RTE in one pod, sharing the app's volume. */
  const sharedPod = (rteMounts: Obj[]) => {
    const pod = deployment([
      { ...appContainer([]), volumeMounts: [{ name: "persistent", mountPath: "/app/dist/persistent" }] },
      { ...rteContainer(), volumeMounts: rteMounts },
    ]);
    pod.spec.template.spec.volumes = [{ name: "persistent", persistentVolumeClaim: { claimName: "app" } }];
    return pod;
  };
  const playbookFolders = [
    { name: "persistent", mountPath: "/app/dist/persistent/playbooks", subPath: "playbooks" },
    { name: "persistent", mountPath: "/app/dist/persistent/repositories", subPath: "repositories" },
  ];

  it("passes a token-only RTE as uid 1000, one with its own metrics token, and the database-mode RTE as rendered", async () => {
    expect(await runResourcePolicy(rteBoundary, asResource(deployment([rteContainer()])))).toEqual([]);
    expect(
      await runResourcePolicy(
        rteBoundary,
        asResource(deployment([rteContainer([{ name: "METRICS_TOKEN", ...secretRef("rte-metrics") }])])),
      ),
    ).toEqual([]);
    expect(await runResourcePolicy(rteBoundary, asResource(deployment([databaseRte()])))).toEqual([]);
  });
  it.each([
    [
      "a database password",
      rteContainer([{ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "p" } } }]),
      /must not hold DB_PASSWORD/,
    ],
    [
      "the encryption secret",
      rteContainer([{ name: "ENCRYPTION_SECRET", value: "x".repeat(32) }]),
      /must not hold ENCRYPTION_SECRET/,
    ],
    [
      "a literal token",
      {
        ...rteContainer(),
        env: [
          { name: "RTE_MODE", value: "outbound" },
          { name: "RTE_TOKEN", value: "literal-token-123456" },
        ],
      },
      /RTE_TOKEN must come from a Secret/,
    ],
    ["another uid", rteContainer([], { ...restrictedContainer(), runAsUser: 2000 }), /must run as uid 1000/],
    ["envFrom", { ...rteContainer(), envFrom: [{ secretRef: { name: "app-keys" } }] }, /must not use envFrom/],
    [
      "a literal METRICS_TOKEN",
      rteContainer([{ name: "METRICS_TOKEN", value: "a-literal-metrics-token" }]),
      /METRICS_TOKEN must come from a Secret of the RTE's own/,
    ],
    [
      "an unknown RTE_MODE",
      {
        ...rteContainer(),
        env: [
          { name: "RTE_MODE", value: "sideways" },
          { name: "RTE_TOKEN", ...secretRef("keys") },
        ],
      },
      /RTE_MODE "sideways" is unknown/,
    ],
    // No RTE_MODE is the database mode: checked, not skipped.
    [
      "a database-mode RTE with a literal DB_PASSWORD",
      {
        ...databaseRte(),
        env: databaseRte().env.map((e: Obj) => (e.name === "DB_PASSWORD" ? { name: "DB_PASSWORD", value: "x" } : e)),
      },
      /DB_PASSWORD must come from a Secret/,
    ],
    [
      "a database-mode RTE with the encryption secret",
      databaseRte([{ name: "ENCRYPTION_SECRET", ...secretRef("keys", "encryption-secret") }]),
      /\(database\): must not hold ENCRYPTION_SECRET/,
    ],
    [
      "a database-mode RTE that registers itself",
      { ...databaseRte(), env: databaseRte().env.filter((e: Obj) => e.name !== "RTE_REGISTER") },
      /must not register itself \(RTE_REGISTER=0/,
    ],
    [
      "an RTE known only by AF_ROLE (a custom image, no RTE_MODE)",
      {
        name: "runner",
        image: "registry.example.com/my-rte:1",
        env: [
          { name: "AF_ROLE", value: "rte" },
          { name: "DB_PASSWORD", value: "x" },
        ],
        securityContext: { ...restrictedContainer(), runAsUser: 1000 },
      },
      /"runner" \(database\).*DB_PASSWORD must come from a Secret/,
    ],
  ])("fires on %s", async (_name, container, message) => {
    const violations = await runResourcePolicy(
      rteBoundary,
      asResource(deployment([container], undefined, { runAsUser: undefined })),
    );
    expect(violations.join("\n")).toMatch(message);
  });

  // The attack (issue 33): the app's secrets under names of the RTE's choosing, or as a volume.
  it.each([
    [
      "ANSIBLE_VAULT_PASS from the app's encryption-secret",
      [{ name: "ANSIBLE_VAULT_PASS", ...secretRef("app-keys", "encryption-secret") }],
      /must not read Secret app-keys \(key encryption-secret\) as ANSIBLE_VAULT_PASS/,
    ],
    [
      "X_ADMIN from admin-password",
      [{ name: "X_ADMIN", ...secretRef("app-keys", "admin-password") }],
      /must not read Secret app-keys \(key admin-password\) as X_ADMIN/,
    ],
    [
      "MYSQL_PWD from the database's root-password",
      [{ name: "MYSQL_PWD", ...secretRef("app-db", "root-password") }],
      /must not read Secret app-db \(key root-password\) as MYSQL_PWD/,
    ],
    [
      "a token read from the app's encryption-secret",
      [{ name: "METRICS_TOKEN", ...secretRef("app-keys", "encryption-secret") }],
      /METRICS_TOKEN must not come from key encryption-secret of Secret app-keys/,
    ],
    [
      "DB_PASSWORD outside the database mode, by its own name",
      [{ name: "DB_PASSWORD", ...secretRef("app-db", "password") }],
      /must not hold DB_PASSWORD/,
    ],
  ])("fires on an RTE reading %s", async (_name, env, message) => {
    const violations = await runResourcePolicy(rteBoundary, asResource(deployment([rteContainer(env)])));
    expect(violations.join("\n")).toMatch(message);
  });
  const withVolume = (volume: Obj, mountPath = "/etc/keys", app = false) => {
    const pod = deployment([
      ...(app ? [{ ...appContainer([]), volumeMounts: [{ name: volume.name, mountPath: "/keys" }] }] : []),
      { ...rteContainer(), volumeMounts: [{ name: volume.name, mountPath, readOnly: true }] },
    ]);
    pod.spec.template.spec.volumes = [volume];
    return pod;
  };
  it.each([
    [
      "a secret volume",
      withVolume({ name: "keys", secret: { secretName: "app-keys" } }),
      /mounts Secret app-keys \(volume "keys"\) at \/etc\/keys: an RTE mounts no Secret but its own ssh files/,
    ],
    [
      "a projected secret source",
      withVolume({
        name: "bundle",
        projected: { sources: [{ configMap: { name: "ca" } }, { secret: { name: "app-keys" } }] },
      }),
      /mounts Secret app-keys \(volume "bundle"\)/,
    ],
    [
      "the app's Secret at the ssh path",
      withVolume({ name: "ssh", secret: { secretName: "app-keys" } }, "/home/node/.ssh", true),
      /mounts Secret app-keys at \/home\/node\/.ssh, which another container of the pod reads/,
    ],
    [
      "its token's Secret at the ssh path",
      withVolume({ name: "ssh", secret: { secretName: "keys" } }, "/home/node/.ssh"),
      /mounts Secret keys at \/home\/node\/.ssh, which its token or password also comes from/,
    ],
  ])("fires on an RTE mounting %s", async (_name, pod, message) => {
    expect((await runResourcePolicy(rteBoundary, asResource(pod))).join("\n")).toMatch(message);
  });
  it("passes an RTE's own ssh Secret at /home/node/.ssh and non-secret volumes", async () => {
    expect(
      await runResourcePolicy(
        rteBoundary,
        asResource(withVolume({ name: "ssh", secret: { secretName: "rte-ssh" } }, "/home/node/.ssh")),
      ),
    ).toEqual([]);
    expect(
      await runResourcePolicy(
        rteBoundary,
        asResource(withVolume({ name: "ca", projected: { sources: [{ configMap: { name: "ca" } }] } })),
      ),
    ).toEqual([]);
  });

  it("passes the playbook folders by subPath and the ssh folder read-only from the app's volume", async () => {
    const ok = sharedPod([
      ...playbookFolders,
      { name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh", readOnly: true },
    ]);
    expect(await runResourcePolicy(rteBoundary, asResource(ok))).toEqual([]);
  });
  it.each([
    [
      "the whole app volume",
      [{ name: "persistent", mountPath: "/app/dist/persistent" }],
      /mounts the whole of volume "persistent" at \/app\/dist\/persistent/,
    ],
    [
      "the whole app volume elsewhere",
      [{ name: "persistent", mountPath: "/data" }],
      /mounts the whole of volume "persistent" at \/data/,
    ],
    [
      "the app's ssh keys read-write",
      [{ name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh" }],
      /mounts ssh of the app's volume "persistent" read-write/,
    ],
  ])("fires on an RTE mounting %s", async (_name, mounts, message) => {
    expect((await runResourcePolicy(rteBoundary, asResource(sharedPod(mounts)))).join("\n")).toMatch(message);
  });
});
