/**
 * The ssh-workspace image run as the chart and the Pulumi component run it
 * (components/ssh/ssh-workspace.ts): as uid 1000, every capability dropped, no privilege
 * escalation, a read-only root filesystem, a home volume, the keys Secret as a read-only file at
 * /etc/entryway/keys/authorized_keys, and empty, writable /run/entryway and /tmp (emptyDirs).
 *
 * startWorkspaceContainer gives where sshd listens and what ssh needs (key, known_hosts), so a test
 * can reach it directly or through a CONNECT router with the generated ssh config.
 *
 * Network: the container shares the host's network namespace, since podman's own networks here
 * would add host firewall rules and non-loopback addresses. The image's sshd_config listens on
 * 0.0.0.0, so the test mounts a copy of it changed only in ListenAddress (127.0.0.1), as
 * test/ssh/e2e.test.ts does; the entrypoint takes the port from ENTRYWAY_SSHD_PORT, as in the pod.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Podman } from "../../testkit/gateway/podman";
import { repoRoot } from "../../testkit/harness/helm";
import { freePort, waitForPort } from "../../testkit/harness/net";
import { sshKeyPair } from "../../testkit/harness/process";

export interface WorkspaceContainer {
  name: string;
  host: string;
  port: number;
  user: string;
  identityFile: string;
  knownHostsFile: string;
  /** ssh's arguments for running `command` in the workspace, straight to its port. */
  sshArgs(command: string): string[];
}

export async function startWorkspaceContainer(
  podman: Podman,
  image: string,
  name: string,
  user = "dev",
): Promise<WorkspaceContainer> {
  const dir = join(podman.dir, name);
  mkdirSync(dir, { recursive: true });
  const identityFile = join(dir, "id_ed25519");
  await sshKeyPair(identityFile, "images-test");
  const authorizedKeys = join(dir, "authorized_keys");
  writeFileSync(authorizedKeys, readFileSync(`${identityFile}.pub`));
  chmodSync(authorizedKeys, 0o444); // the Secret's defaultMode
  const sshdConfig = join(dir, "sshd_config");
  writeFileSync(
    sshdConfig,
    readFileSync(join(repoRoot, "images/ssh-workspace/sshd_config"), "utf8").replace(
      /^ListenAddress .*$/m,
      "ListenAddress 127.0.0.1",
    ),
  );
  chmodSync(sshdConfig, 0o444);

  const port = await freePort();
  const home = `/home/${user}`;
  await podman.podman(
    "run",
    "-d",
    "--name",
    name,
    "--network",
    "host",
    "--user",
    "1000",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--read-only",
    "--read-only-tmpfs=false",
    "-v",
    `${name}-home:${home}`,
    "-v",
    `${authorizedKeys}:/etc/entryway/keys/authorized_keys:ro`,
    "-v",
    `${sshdConfig}:/etc/ssh/entryway/sshd_config:ro`,
    // Writable by the user, as the pod's emptyDir is (podman gives a tmpfs the image directory's
    // mode, 0755, and root as owner; U hands it to the container's user).
    "--tmpfs",
    "/run/entryway:rw,size=16m,U",
    "--tmpfs",
    "/tmp:rw,mode=1777",
    "-e",
    `ENTRYWAY_SSHD_PORT=${port}`,
    image,
  );
  const running = async () =>
    (await podman.podman("inspect", "--format", "{{.State.Running}}", name)).trim() === "true";
  try {
    await waitForPort(port, `sshd in ${name}`, running);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await podman.podman("logs", name).catch(() => "")}`, {
      cause: error,
    });
  }

  // The host key the entrypoint made on the home volume, for a known_hosts line.
  const hostKey = await podman.podman("exec", name, "cat", `${home}/.entryway/ssh_host_ed25519_key.pub`);
  const knownHostsFile = join(dir, "known_hosts");
  writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${hostKey}`);
  return {
    name,
    host: "127.0.0.1",
    port,
    user,
    identityFile,
    knownHostsFile,
    sshArgs: (command) => [
      "-F",
      "none",
      "-i",
      identityFile,
      "-p",
      String(port),
      "-o",
      "BatchMode=yes",
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${knownHostsFile}`,
      `${user}@127.0.0.1`,
      command,
    ],
  };
}
