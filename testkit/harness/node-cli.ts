/**
 * The real CLI as `entryway` on PATH, run IN A REAL NODE'S NETWORK NAMESPACE (testkit/harness/node.ts):
 * a script that runs gateway/src/cli/main.ts from source (as gateway/test/clients does) under
 * `nsenter --net`, the only place where kube-proxy's rules make a ClusterIP reachable (kubernetes
 * pkg/proxy/iptables/proxier.go, iptablesJumpChains: the nat table's KUBE-SERVICES is jumped to
 * from OUTPUT as well as PREROUTING, so the node's own connections are translated too). The gateway
 * and the token come from ENTRYWAY_GATEWAY and ENTRYWAY_TOKEN_FILE (`<home>/token`); plain ws:// to
 * an address that is not loopback needs --insecure (the chart leaves TLS to the Istio gateway in
 * front of its Service). And the sessions such a CLI leaves in a target pod, seen from this machine.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "vitest";
import { cleanEnv, startTmux, tmuxAvailable, writeCliShim, type Tmux } from "../gateway/cli-harness";
import { repoRoot } from "./helm";
import type { RealNode } from "./node";
import { runBytes } from "./process";

export interface NodeCli {
  /** The file the CLI reads its token from. */
  readonly tokenFile: string;
  /** The CLI's environment for a gateway at `gatewayUrl`. */
  env(gatewayUrl: string): NodeJS.ProcessEnv;
  /** `entryway <args>` to its end, `input` on its stdin. */
  run(
    gatewayUrl: string,
    args: string[],
    input?: string,
  ): Promise<{ status: number | null; stdout: Buffer; stderr: string }>;
  /** `entryway enter --insecure <target>` on a terminal (tmux, 100x30), once the remote shell's prompt shows. */
  tmuxEnter(gatewayUrl: string, target: string): Promise<Tmux>;
}

export function nodeCli(node: RealNode, home: string): NodeCli {
  const tokenFile = path.join(home, "token");
  const env = (gatewayUrl: string) => {
    const bin = path.join(home, "bin");
    if (!existsSync(bin)) writeCliShim(bin, `nsenter --net=/run/netns/${node.netns} -- `);
    return cleanEnv(home, {
      PATH: `${bin}:${process.env.PATH}`,
      ENTRYWAY_GATEWAY: gatewayUrl,
      ENTRYWAY_TOKEN_FILE: tokenFile,
    });
  };
  return {
    tokenFile,
    env,
    run: (gatewayUrl, args, input = "") => runBytes("entryway", args, { env: env(gatewayUrl), cwd: repoRoot, input }),
    async tmuxEnter(gatewayUrl, target) {
      if (!tmuxAvailable()) throw new Error("tmux is needed for the CLI on a terminal (Debian package tmux)");
      const tmux = await startTmux(env(gatewayUrl));
      try {
        await tmux.waitFor(/^local\$/m);
        await tmux.type(`entryway enter --insecure ${target}; echo cli-exit=$?`);
        await tmux.enter();
        // The remote shell's prompt (busybox ash: "<dir> $ ") on a line after the command's.
        await tmux.waitFor(/cli-exit=\$\?\n[\s\S]*\$$/m, 60_000);
        return tmux;
      } catch (error) {
        await tmux.stop();
        throw error;
      }
    },
  };
}

/** The sessions in a target pod's first container, seen from this machine. */
export interface TargetSessions {
  /** The container's processes other than its own (PID 1 in the pod): every session's. */
  processes(): Promise<ContainerProcess[]>;
  /** The host PIDs of the session processes with this PID inside the pod. */
  shells(inner: number): Promise<number[]>;
  /** A session on a terminal whose shell runs `sleep 600` in the foreground, both seen in the target. */
  busy(gatewayUrl: string): Promise<{ tmux: Tmux; inner: number }>;
}

export function targetSessions(
  { core, node, cli }: { core: CoreV1Api; node: RealNode; cli: NodeCli },
  namespace: string,
  name: string,
): TargetSessions {
  const processes = async () => {
    const pod = await core.readNamespacedPod({ namespace, name });
    const all = await containerProcesses(node, pod.status!.containerStatuses![0]!.containerID!);
    return all.filter((p) => p.inner !== 1);
  };
  return {
    processes,
    shells: async (inner) => (await processes()).filter((p) => p.inner === inner).map((p) => p.pid),
    async busy(gatewayUrl) {
      const tmux = await cli.tmuxEnter(gatewayUrl, `${namespace}/${name}`);
      try {
        await tmux.type("echo shell-pid=$$; sleep 600");
        await tmux.enter();
        const inner = Number((await tmux.waitFor(/^shell-pid=(\d+)$/m, 60_000))[1]);
        await expect
          .poll(async () => (await processes()).map((p) => p.cmdline), { timeout: 15_000, interval: 250 })
          .toContain("sleep 600");
        expect((await processes()).map((p) => p.inner)).toContain(inner);
        return { tmux, inner };
      } catch (error) {
        await tmux.stop();
        throw error;
      }
    },
  };
}

/** A process of a container on this machine: host PID, PID inside the pod, command line. */
export interface ContainerProcess {
  readonly pid: number;
  readonly inner: number | undefined;
  readonly cmdline: string;
}

/** The processes of a container (`containerd://<id>`) of the node's containerd, seen on this machine. */
async function containerProcesses(node: RealNode, containerId: string): Promise<ContainerProcess[]> {
  return (await node.ctr("tasks", "ps", containerId.replace("containerd://", "")))
    .split("\n")
    .slice(1)
    .map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => pid > 0)
    .map((pid) => ({ pid, inner: readNsPid(pid), cmdline: readCmdline(pid) }));
}

/** The innermost PID of a process (its PID in the container's PID namespace), from /proc/<pid>/status NSpid. */
function readNsPid(pid: number): number | undefined {
  try {
    const line = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return line ? Number(line.trim().split(/\s+/).at(-1)) : undefined;
  } catch {
    return undefined;
  }
}

/** A process's command line, its arguments joined by spaces ("" once it is gone). */
function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return "";
  }
}
