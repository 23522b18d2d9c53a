// A private podman for the Docker-backend tests: its own storage, runtime dir and CONTAINERS_CONF under
// a temporary directory, `podman system service` on a unix socket there (the Docker Engine API), and
// an image imported from a busybox-static rootfs (no registry is reachable). Everything is removed in stop().
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, copyFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const IMAGE = "localhost/entryway-test-busybox:latest";
const APPLETS = [
  "sh",
  "stty",
  "ps",
  "sleep",
  "cat",
  "head",
  "seq",
  "kill",
  "echo",
  "printf",
  "ls",
  "true",
  "false",
  "env",
  "tr",
  "wc",
  "yes",
  "md5sum",
  "dd",
  "pgrep",
  "tar",
];

export interface Podman {
  socketPath: string;
  dir: string;
  /** The `podman system service` process (the Docker API), e.g. to read its CPU time. */
  servicePid: number;
  /** The podman CLI's arguments and environment for this private store (to run it as a process of one's own). */
  cli: { args: string[]; env: NodeJS.ProcessEnv };
  /** Runs the podman CLI against this private store. */
  podman(...args: string[]): Promise<string>;
  /** Starts a container that just sleeps; returns its name. */
  startContainer(name: string): Promise<string>;
  /** PIDs of the processes in the container other than its main process: the shells and their children. */
  shells(container: string): Promise<string[]>;
  stop(): Promise<void>;
}

export function podmanAvailable(): boolean {
  return (
    existsSync("/usr/bin/podman") &&
    existsSync("/bin/busybox") &&
    (existsSync("/usr/bin/runc") || existsSync("/usr/sbin/runc"))
  );
}

export interface PodmanOptions {
  /** vfs (default) needs nothing of the kernel; overlay shares layers, which image builds want. */
  storageDriver?: "vfs" | "overlay";
}

export async function startPodman(options: PodmanOptions = {}): Promise<Podman> {
  const dir = mkdtempSync(join(tmpdir(), "entryway-podman-"));
  const conf = join(dir, "containers.conf");
  writeFileSync(
    conf,
    [
      "[containers]",
      'default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]',
      "[engine]",
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      "",
    ].join("\n"),
  );
  const env = { ...process.env, CONTAINERS_CONF: conf, XDG_RUNTIME_DIR: join(dir, "xdg") };
  mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true });
  const global = [
    "--root",
    join(dir, "storage"),
    "--runroot",
    join(dir, "run"),
    "--storage-driver",
    options.storageDriver ?? "vfs",
    "--tmpdir",
    join(dir, "tmp"),
    "--events-backend",
    "none",
  ];
  const podman = async (...args: string[]) =>
    (await run("podman", [...global, ...args], { env, maxBuffer: 64 * 1024 * 1024 })).stdout;

  // Image: busybox-static and its applets, plus a file of known content for bulk-output tests.
  const rootfs = join(dir, "rootfs");
  mkdirSync(join(rootfs, "bin"), { recursive: true });
  mkdirSync(join(rootfs, "tmp"), { recursive: true });
  copyFileSync("/bin/busybox", join(rootfs, "bin", "busybox"));
  for (const applet of APPLETS) symlinkSync("busybox", join(rootfs, "bin", applet));
  await run("sh", ["-c", `tar -C '${rootfs}' -c . > '${join(dir, "rootfs.tar")}'`]);
  await podman("import", join(dir, "rootfs.tar"), IMAGE);

  const socketPath = join(dir, "podman.sock");
  const service: ChildProcess = spawn("podman", [...global, "system", "service", "--time=0", `unix://${socketPath}`], {
    env,
    stdio: "ignore",
  });
  const deadline = Date.now() + 20_000;
  while (!existsSync(socketPath)) {
    if (Date.now() > deadline || service.exitCode !== null) throw new Error("podman system service did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  const containers: string[] = [];

  return {
    socketPath,
    dir,
    servicePid: service.pid!,
    cli: { args: global, env },
    podman,
    async startContainer(name) {
      await podman("run", "-d", "--name", name, "--network", "none", IMAGE, "/bin/sleep", "1000000");
      containers.push(name);
      return name;
    },
    async shells(container) {
      // Every live process but the container's own (PID 1) and this ps: shells and whatever they started.
      // Zombies are left out: they have ended, and only wait for PID 1 (a plain `sleep` here) to reap them.
      const out = await podman("exec", container, "ps", "-o", "pid,stat,args");
      return out
        .split("\n")
        .slice(1)
        .map((line) => line.trim().split(/\s+/))
        .filter(
          ([pid, stat, ...args]) =>
            pid && pid !== "1" && !stat?.startsWith("Z") && args.join(" ") !== "ps -o pid,stat,args",
        )
        .map(([pid]) => pid!);
    },
    async stop() {
      for (const name of containers) await podman("rm", "-f", "-t", "0", name).catch(() => {});
      await podman("rmi", "-f", IMAGE).catch(() => {});
      service.kill("SIGTERM");
      await new Promise((r) => (service.exitCode !== null ? r(null) : service.once("exit", r)));
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      // conmon's exit command (`podman container cleanup`) can still touch the tmpdir just after: remove again.
      await new Promise((r) => setTimeout(r, 1000));
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}
