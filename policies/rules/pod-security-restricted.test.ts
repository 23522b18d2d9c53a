/**
 * `entryway-pod-security-restricted`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { deployment, restrictedContainer, wsLabels } from "../../test/policies/fixtures";
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

  it("allows the documented sshd exception only for an ssh-workspace's sshd container", async () => {
    const sshd = {
      ...restrictedContainer(),
      capabilities: { drop: ["ALL"], add: ["SETUID", "SETGID", "SYS_CHROOT", "AUDIT_WRITE"] },
    };
    const ok = deployment([{ name: "sshd", image: "x", securityContext: sshd }], wsLabels);
    expect(await runResourcePolicy(podSecurityRestricted, asResource(ok))).toEqual([]);
    const otherContainer = deployment([{ name: "helper", image: "x", securityContext: sshd }], wsLabels);
    expect((await runResourcePolicy(podSecurityRestricted, asResource(otherContainer))).join("\n")).toMatch(
      /adding capability SETUID .*only an ssh-workspace's sshd/,
    );
    const otherWorkload = deployment([{ name: "sshd", image: "x", securityContext: sshd }]);
    expect(await runResourcePolicy(podSecurityRestricted, asResource(otherWorkload))).toHaveLength(4);
  });
});
