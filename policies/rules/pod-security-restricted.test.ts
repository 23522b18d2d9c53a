/**
 * `entryway-pod-security-restricted`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { deployment, restrictedContainer, wsLabels } from "../../test/policies/fixtures";
import { ADMITTED, REFUSED, restrictedPod } from "../../test/policies/pod-security-fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { podSecurityRestricted } from "./pod-security-restricted";

describe("Pod Security restricted", () => {
  it("passes a workload that meets restricted, with the volume types, sysctls and capability it allows", async () => {
    const good = deployment([
      {
        name: "c",
        image: "x",
        ports: [{ containerPort: 8080 }],
        securityContext: { ...restrictedContainer(), capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } },
      },
    ]);
    good.spec.template.spec.volumes = [
      { name: "tmp", emptyDir: {} },
      { name: "data", persistentVolumeClaim: { claimName: "data" } },
    ];
    good.spec.template.spec.securityContext.sysctls = [{ name: "net.ipv4.tcp_syncookies", value: "1" }];
    expect(await runResourcePolicy(podSecurityRestricted, asResource(good))).toEqual([]);
  });

  it.each([
    ["a privileged container", { ...restrictedContainer(), privileged: true }, /privileged is not allowed/],
    [
      "privilege escalation",
      { ...restrictedContainer(), allowPrivilegeEscalation: true },
      /allowPrivilegeEscalation must be false/,
    ],
    ["capabilities not dropped", { ...restrictedContainer(), capabilities: {} }, /must drop ALL/],
    [
      "an added capability",
      { ...restrictedContainer(), capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] } },
      /adding capability NET_ADMIN/,
    ],
    ["root", { ...restrictedContainer(), runAsUser: 0 }, /runs as root/],
    ["no seccomp", { ...restrictedContainer(), seccompProfile: { type: "Unconfined" } }, /seccompProfile/],
  ])("fires on %s", async (_name, securityContext, message) => {
    const violations = await runResourcePolicy(
      podSecurityRestricted,
      asResource(deployment([{ name: "c", image: "x", securityContext }], undefined, { seccompProfile: undefined })),
    );
    expect(violations.join("\n")).toMatch(message);
  });

  it("fires on host namespaces and hostPath volumes", async () => {
    const bad = deployment([{ name: "c", image: "x", securityContext: restrictedContainer() }]);
    bad.spec.template.spec.hostNetwork = true;
    bad.spec.template.spec.volumes = [{ name: "root", hostPath: { path: "/" } }];
    const violations = await runResourcePolicy(podSecurityRestricted, asResource(bad));
    expect(violations).toEqual([
      expect.stringMatching(/hostNetwork is not allowed/),
      expect.stringMatching(/hostPath volume "root"/),
    ]);
  });

  it("fires on volume types, host ports, sysctls and proc mounts that restricted does not allow", async () => {
    const bad = deployment([
      {
        name: "c",
        image: "x",
        ports: [{ containerPort: 22, hostPort: 2222 }],
        securityContext: { ...restrictedContainer(), procMount: "Unmasked" },
      },
    ]);
    bad.spec.template.spec.volumes = [
      { name: "share", nfs: { server: "nfs.example", path: "/" } },
      { name: "ok", emptyDir: {} },
    ];
    bad.spec.template.spec.securityContext.sysctls = [
      { name: "kernel.msgmax", value: "1" },
      { name: "net.ipv4.tcp_syncookies", value: "1" },
    ];
    const violations = await runResourcePolicy(podSecurityRestricted, asResource(bad));
    expect(violations).toEqual([
      expect.stringMatching(/volume "share" of type nfs is not allowed/),
      expect.stringMatching(/sysctl kernel.msgmax is not allowed/),
      expect.stringMatching(/procMount Unmasked is not allowed/),
      expect.stringMatching(/hostPort 2222 is not allowed/),
    ]);
  });

  it("has no exception: an ssh-workspace's sshd container adds no capability either", async () => {
    const sshd = {
      ...restrictedContainer(),
      capabilities: { drop: ["ALL"], add: ["SETUID", "SETGID", "SYS_CHROOT", "AUDIT_WRITE"] },
    };
    const labelled = deployment([{ name: "sshd", image: "x", securityContext: sshd }], wsLabels);
    expect(await runResourcePolicy(podSecurityRestricted, asResource(labelled))).toEqual(
      ["SETUID", "SETGID", "SYS_CHROOT", "AUDIT_WRITE"].map(
        (cap) => `Deployment ns/demo container "sshd": adding capability ${cap} is not allowed`,
      ),
    );
  });

  // Each check of Pod Security "restricted", one broken at a time: test/real/pod-security.test.ts
  // has the real API server's Pod Security admission refuse the same pods.
  it.each(REFUSED.map((c) => [c.name, c] as const))("fires on %s", async (_name, { change, rule }) => {
    const pod = restrictedPod();
    change(pod);
    expect((await runResourcePolicy(podSecurityRestricted, asResource(pod))).join("\n")).toMatch(rule);
  });
  it.each(ADMITTED.map((c) => [c.name, c] as const))("passes %s", async (_name, { change }) => {
    const pod = restrictedPod();
    change(pod);
    expect(await runResourcePolicy(podSecurityRestricted, asResource(pod))).toEqual([]);
  });
  it("refuses a user-namespaced pod's root only where Pod Security does: runAsUser 0 passes with hostUsers: false", async () => {
    const pod = restrictedPod();
    pod.spec.hostUsers = false;
    pod.spec.securityContext.runAsUser = 0;
    delete pod.spec.securityContext.runAsNonRoot;
    delete pod.spec.containers[0].securityContext.runAsNonRoot;
    expect(await runResourcePolicy(podSecurityRestricted, asResource(pod))).toEqual([]);
    pod.spec.hostUsers = true;
    expect((await runResourcePolicy(podSecurityRestricted, asResource(pod))).join("\n")).toMatch(
      /the pod runs as root \(runAsUser 0\)/,
    );
  });
});
