/**
 * The ssh-workspace image's sshd_config and entrypoint (images/ssh-workspace), checked on Debian's
 * real sshd started by that entrypoint on loopback (workspace-sshd.ts): sshd -t and -T accept the
 * settings and show keys only, no root, no port, socket or agent forwarding by default; local
 * forwarding with ENTRYWAY_TCP_FORWARDING=local, never remote forwarding; the entrypoint's own
 * refusals. (Through the gateway, with a non-root sshd too: e2e.test.ts.)
 *
 * Needs ssh, sshd, ssh-keygen and ssh-agent. Under CI=true a missing tool fails the suite; elsewhere
 * it is skipped and the missing tools are named. Everything listens on 127.0.0.1 only and is stopped
 * by PID afterwards.
 */
import { type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, waitForPort } from "../../testkit/harness/net";
import {
  Children,
  entrypointSshd,
  imageEntrypoint,
  imageSshdConfig,
  isRoot,
  loopbackSshdConfig,
  missingTools,
  runSync,
  userKey,
} from "./workspace-sshd";

const user = os.userInfo().username;
const canRun =
  missingTools("test/ssh/workspace-sshd.test.ts", ["ssh", "ssh-keygen", "ssh-agent", "/usr/sbin/sshd"]).length === 0;

const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-workspace-sshd-"));
const children = new Children();
let sshPort = 0;
let key = "";
let sshdChild: ChildProcess | undefined;

beforeAll(async () => {
  if (!canRun) return;
  // The workspace's host key (made by its entrypoint) and the user's key.
  key = userKey(dir);
  sshPort = await freePort();
  const sshd = entrypointSshd({
    port: sshPort,
    dir,
    config: loopbackSshdConfig(path.join(dir, "sshd_config")),
    hostKeyDir: path.join(dir, "hostkey"),
    pidFile: path.join(dir, "sshd.pid"),
  });
  const child = children.start("sshd", sshd.command, sshd.args, sshd.env);
  sshdChild = child;
  await waitForPort(sshPort, "sshd", () => child.exitCode === null);
});

afterAll(() => {
  children.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(canRun)("the image's sshd_config and entrypoint, with Debian's real sshd", () => {
  const imageConfig = imageSshdConfig;
  const hostKey = () => path.join(dir, "hostkey", "ssh_host_ed25519_key");

  it("passes sshd -t, and sshd -T shows keys-only, no root, no forwarding, MaxStartups for one shared source address", () => {
    const check = runSync("/usr/sbin/sshd", ["-t", "-f", imageConfig, "-h", hostKey()]);
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
    const effective = runSync("/usr/sbin/sshd", [
      "-T",
      "-f",
      imageConfig,
      "-h",
      hostKey(),
      "-C",
      "user=dev,host=gw,addr=10.0.0.1",
    ]).stdout.toString();
    for (const line of [
      "passwordauthentication no",
      "kbdinteractiveauthentication no",
      "permitrootlogin no",
      "pubkeyauthentication yes",
      "authorizedkeysfile /etc/entryway/keys/authorized_keys",
      "allowtcpforwarding no",
      "allowstreamlocalforwarding no",
      "allowagentforwarding no",
      "maxstartups 100:30:200",
      "persourcemaxstartups none",
      "x11forwarding no",
      "permittunnel no",
      "gatewayports no",
      "usepam no",
      "port 2222",
    ]) {
      expect(effective.split("\n")).toContain(line);
    }
  });

  it("is really checked: a misspelt option fails sshd -t", () => {
    const broken = path.join(dir, "broken_sshd_config");
    writeFileSync(broken, readFileSync(imageConfig, "utf8") + "PasswordAuthentification no\n");
    const check = runSync("/usr/sbin/sshd", ["-t", "-f", broken, "-h", hostKey()]);
    expect(check.status).not.toBe(0);
    expect(check.stderr).toMatch(/Bad configuration option: PasswordAuthentification/);
  });

  it("the entrypoint turned PerSourcePenalties off exactly when this sshd has it (OpenSSH >= 9.8)", () => {
    const supported =
      runSync("/usr/sbin/sshd", ["-t", "-f", imageConfig, "-h", hostKey(), "-o", "PerSourcePenalties=no"]).status === 0;
    // sshd rewrites its process title to "sshd: <its command line> [listener] ...".
    const title = readFileSync(`/proc/${sshdChild!.pid}/cmdline`, "utf8").replace(/\0/g, " ");
    expect(title).toMatch(/^sshd: \/usr\/sbin\/sshd -D -e /); // exec'd: the entrypoint's shell is gone
    expect(title).toContain(` -p ${sshPort} `);
    expect(title.includes("-o PerSourcePenalties=no")).toBe(supported);
    expect(title).toContain(`-o AllowUsers=${user}`);
    expect(title).toContain("-o AllowTcpForwarding=no -o AllowStreamLocalForwarding=no");
  });

  it("the entrypoint refuses a forwarding mode other than no or local", () => {
    const result = runSync("sh", [imageEntrypoint], {
      env: { ...process.env, ENTRYWAY_ALLOW_ROOT: "1", ENTRYWAY_TCP_FORWARDING: "remote" },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe("entrypoint: ENTRYWAY_TCP_FORWARDING must be no or local, not remote\n");
  });

  describe("forwarding, with the real sshd and ssh (straight to sshd on loopback)", () => {
    let localPort = 0;
    let agent: ChildProcess | undefined;
    const agentSocket = path.join(dir, "agent.sock");
    const known = path.join(dir, "known_hosts_direct");
    const direct = (port: number, options: string[], command: string[] = []) =>
      runSync(
        "ssh",
        [
          "-p",
          String(port),
          "-i",
          key,
          "-o",
          "BatchMode=yes",
          "-o",
          `UserKnownHostsFile=${known}`,
          "-o",
          "StrictHostKeyChecking=yes",
          "-o",
          "ExitOnForwardFailure=yes",
          ...options,
          `${user}@127.0.0.1`,
          ...command,
        ],
        { env: { ...process.env, SSH_AUTH_SOCK: agentSocket } },
      );

    beforeAll(async () => {
      // A second sshd from the entrypoint with ENTRYWAY_TCP_FORWARDING=local (tcpForwarding: local),
      // and agent forwarding turned on by hand, to show the checks below see the difference.
      localPort = await freePort();
      const sshd = entrypointSshd({
        port: localPort,
        dir,
        config: path.join(dir, "sshd_config"),
        hostKeyDir: path.join(dir, "hostkey"),
        pidFile: path.join(dir, "sshd-local.pid"),
        options: ["-o", "AllowAgentForwarding=yes"],
        env: { ENTRYWAY_TCP_FORWARDING: "local" },
      });
      const local = children.start("sshd (local forwarding)", sshd.command, sshd.args, sshd.env);
      agent = children.start("ssh-agent", "ssh-agent", ["-D", "-a", agentSocket]);
      await waitForPort(localPort, "sshd (local forwarding)", () => local.exitCode === null);
      for (let i = 0; i < 50 && !existsSync(agentSocket); i++) await new Promise((r) => setTimeout(r, 100));
      const hostKey = readFileSync(path.join(dir, "hostkey", "ssh_host_ed25519_key.pub"), "utf8");
      writeFileSync(known, `[127.0.0.1]:${sshPort} ${hostKey}[127.0.0.1]:${localPort} ${hostKey}`);
    });

    afterAll(() => {
      if (agent?.pid && agent.exitCode === null) process.kill(agent.pid, "SIGTERM");
    });

    it("the default (tcpForwarding: none) refuses ssh -L / -W; local forwards to the workspace's side", () => {
      // -W is -L's channel (direct-tcpip) on stdio: here to sshd's own port, which answers with its banner.
      const refused = direct(sshPort, ["-W", `127.0.0.1:${sshPort}`]);
      expect(refused.status).toBe(255);
      expect(refused.stderr).toMatch(/administratively prohibited/);
      const allowed = direct(localPort, ["-W", `127.0.0.1:${sshPort}`]);
      expect(allowed.stdout.toString()).toMatch(/^SSH-2\.0-OpenSSH/);
    });

    it("remote forwarding (ssh -R) is refused even with local", () => {
      const result = direct(localPort, ["-R", "127.0.0.1:0:127.0.0.1:9"], ["true"]);
      expect(result.status).toBe(255);
      expect(result.stderr).toMatch(/remote port forwarding failed/);
    });

    it("agent forwarding is refused: the session gets no SSH_AUTH_SOCK (it does where allowed)", () => {
      const probe = "echo ${SSH_AUTH_SOCK:-none}";
      expect(direct(sshPort, ["-A"], [probe]).stdout.toString()).toBe("none\n");
      expect(direct(localPort, ["-A"], [probe]).stdout.toString()).toMatch(/^\/\S+\n$/);
    });
  });

  it.runIf(isRoot)("the entrypoint refuses to run sshd as root unless told to", () => {
    const result = runSync("sh", [imageEntrypoint], {
      env: { ...process.env, ENTRYWAY_ALLOW_ROOT: "" },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/refusing to run sshd as root/);
  });
});
