/**
 * SSH through an HTTP CONNECT gateway, end to end on loopback with real parts: Debian's sshd
 * (started by the image's own entrypoint and sshd_config), tinyproxy standing in for the Istio
 * gateway (CONNECT allowed only to the declared workspace host and port), the ~/.ssh/config block
 * the package writes (sshConfigBlock, gateway pointed at loopback), and both ProxyCommands:
 * Debian's proxytunnel and the built-in `entryway connect-proxy`. A TLS variant puts socat
 * (OpenSSL, a test CA) in front of the proxy, as the gateway terminates TLS.
 *
 * Everything listens on 127.0.0.1 only and is stopped by PID afterwards.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sshConfigBlock, type SshConfigEntry } from "../../gateway/src/cli/ssh-config";
import { repoRoot } from "../harness/helm";

const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-ssh-e2e-"));
chmodSync(dir, 0o755); // tinyproxy drops to nobody and must read its filter file
const children: ChildProcess[] = [];
let sshdChild: ChildProcess | undefined;
const user = os.userInfo().username;
const isRoot = process.getuid?.() === 0;
// As root, a second sshd runs as an unprivileged user, as in the pod; nss_wrapper gives that user a
// passwd entry without touching /etc/passwd (as OpenShift-style arbitrary uids get one).
const NSS_WRAPPER = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so";
const canRunAsOtherUser = isRoot && existsSync(NSS_WRAPPER);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, name: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen on 127.0.0.1:${port}`);
}

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], env });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  child.on("exit", (code) => {
    if (code && code !== 0 && !stopping) process.stderr.write(`${name} exited ${code}: ${stderr}\n`);
  });
  children.push(child);
  return child;
}

let stopping = false;
function run(command: string, args: string[], options: { input?: Buffer | string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(command, args, { input: options.input, env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr?.toString() ?? "" };
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

let sshPort = 0;
let nonRootPort = 0;
let proxyPort = 0;
let tlsPort = 0;
const key = path.join(dir, "id_ed25519");
const knownHosts = path.join(dir, "known_hosts");
const caFile = path.join(dir, "ca.pem");
const binDir = path.join(dir, "bin");
// The declared workspace: what the gateway allows (the EnvoyFilter's domain, here tinyproxy's rules).
const workspaceHost = "localhost";

/** An ssh config file: the package's block plus test-only client settings. */
function sshConfigFile(name: string, entry: Omit<SshConfigEntry, "hostName" | "port" | "user" | "identityFile">): string {
  const block = sshConfigBlock({ ...entry, hostName: workspaceHost, port: sshPort, user, identityFile: key });
  const file = path.join(dir, `${name}.config`);
  writeFileSync(file, `${block}\nHost *\n  UserKnownHostsFile ${knownHosts}\n  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 20\n`);
  return file;
}

const env = () => ({ ...process.env, PATH: `${binDir}:${process.env.PATH}` });

beforeAll(async () => {
  [sshPort, proxyPort, tlsPort, nonRootPort] = [await freePort(), await freePort(), await freePort(), await freePort()];

  // Keys made for this test: the workspace's host key (by its entrypoint) and the user's key.
  expect(run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", key]).status).toBe(0);
  const authorizedKeys = path.join(dir, "authorized_keys");
  writeFileSync(authorizedKeys, readFileSync(`${key}.pub`));

  // sshd from the image's entrypoint and sshd_config, on loopback only.
  const config = path.join(dir, "sshd_config");
  writeFileSync(config, readFileSync(path.join(repoRoot, "images/ssh-workspace/sshd_config"), "utf8").replace(/^ListenAddress .*$/m, "ListenAddress 127.0.0.1"));
  if (isRoot && !existsSync("/run/sshd")) {
    // sshd's privilege separation directory (root only), which the openssh-server package's
    // service makes at boot. It stays: another sshd (another run of this suite) may be using it.
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  }
  const hostKeyDir = path.join(dir, "hostkey");
  const sshd = start("sshd", "sh", [
    path.join(repoRoot, "images/ssh-workspace/entrypoint.sh"),
    "-o", `AuthorizedKeysFile=${authorizedKeys}`,
    "-o", `PidFile=${path.join(dir, "sshd.pid")}`,
    // The image runs sshd as the workspace user; a root test run must be allowed to log in.
    ...(isRoot ? ["-o", "PermitRootLogin=prohibit-password"] : []),
  ], {
    ...process.env,
    ENTRYWAY_SSHD_PORT: String(sshPort),
    ENTRYWAY_SSHD_CONFIG: config,
    ENTRYWAY_HOST_KEY_DIR: hostKeyDir,
    ...(isRoot ? { ENTRYWAY_ALLOW_ROOT: "1" } : {}),
  });
  sshdChild = sshd;
  await waitForPort(sshPort, sshd, "sshd");
  writeFileSync(knownHosts, `[${workspaceHost}]:${sshPort} ${readFileSync(path.join(hostKeyDir, "ssh_host_ed25519_key.pub"), "utf8")}`);

  // tinyproxy as the gateway: CONNECT only to the declared host and port.
  const filter = path.join(dir, "filter");
  writeFileSync(filter, `^${workspaceHost}$\n`);
  chmodSync(filter, 0o644);
  const tinyproxyConfig = path.join(dir, "tinyproxy.conf");
  writeFileSync(tinyproxyConfig, [
    ...(isRoot ? ["User nobody", "Group nogroup"] : []),
    `Port ${proxyPort}`,
    "Listen 127.0.0.1",
    "Timeout 600",
    "MaxClients 20",
    "Allow 127.0.0.1",
    `ConnectPort ${sshPort}`,
    ...(canRunAsOtherUser ? [`ConnectPort ${nonRootPort}`] : []),
    `Filter "${filter}"`,
    "FilterType ere",
    "FilterDefaultDeny Yes",
    "DisableViaHeader Yes",
    "",
  ].join("\n"));
  const tinyproxy = start("tinyproxy", "tinyproxy", ["-d", "-c", tinyproxyConfig]);
  await waitForPort(proxyPort, tinyproxy, "tinyproxy");

  // TLS in front of the proxy, with a test CA, as the gateway terminates TLS.
  const ca = (args: string[]) => expect(run("openssl", args).status).toBe(0);
  ca(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=entryway test CA", "-keyout", path.join(dir, "ca.key"), "-out", caFile]);
  ca(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost", "-keyout", path.join(dir, "gw.key"), "-out", path.join(dir, "gw.csr")]);
  writeFileSync(path.join(dir, "gw.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  ca(["x509", "-req", "-in", path.join(dir, "gw.csr"), "-CA", caFile, "-CAkey", path.join(dir, "ca.key"), "-CAcreateserial", "-days", "1", "-extfile", path.join(dir, "gw.ext"), "-out", path.join(dir, "gw.pem")]);
  const socat = start("socat", "socat", [
    `OPENSSL-LISTEN:${tlsPort},bind=127.0.0.1,reuseaddr,fork,cert=${path.join(dir, "gw.pem")},key=${path.join(dir, "gw.key")},verify=0`,
    `TCP:127.0.0.1:${proxyPort}`,
  ]);
  await waitForPort(tlsPort, socat, "socat");

  // `entryway` on PATH, as an installed CLI would be.
  mkdirSync(binDir);
  const tsx = path.join(repoRoot, "node_modules/tsx/dist/cli.mjs");
  writeFileSync(path.join(binDir, "entryway"), `#!/bin/sh\nexec "${process.execPath}" "${tsx}" "${path.join(repoRoot, "gateway/src/cli/main.ts")}" "$@"\n`, { mode: 0o755 });
});

afterAll(() => {
  stopping = true;
  for (const child of children) if (child.exitCode === null && child.pid) process.kill(child.pid, "SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const ALIAS = "ws-e2e";
const variants = [
  { name: "proxytunnel", entry: { alias: ALIAS, gateway: `127.0.0.1:${0}`, proxy: "proxytunnel" as const } },
  { name: "entryway connect-proxy", entry: { alias: ALIAS, gateway: `127.0.0.1:${0}`, proxy: "entryway" as const } },
  { name: "proxytunnel -E (TLS, test CA)", entry: { alias: ALIAS, gateway: "localhost:0", proxy: "proxytunnel" as const, tls: true, caFile } },
  { name: "entryway connect-proxy --tls --ca-file", entry: { alias: ALIAS, gateway: "localhost:0", proxy: "entryway" as const, tls: true, caFile } },
];

describe.each(variants)("ssh through the CONNECT gateway with $name", ({ name, entry }) => {
  const configFor = () => sshConfigFile(name.replace(/\W+/g, "-"), { ...entry, gateway: entry.gateway.replace(/:0$/, `:${entry.tls ? tlsPort : proxyPort}`) });

  it("runs a command with the generated ssh config block", () => {
    const config = configFor();
    expect(readFileSync(config, "utf8")).toContain(entry.proxy === "entryway" ? "ProxyCommand entryway connect-proxy" : "ProxyCommand proxytunnel -q");
    const result = run("ssh", ["-F", config, ALIAS, "echo through-the-gateway; id -un"], { env: env() });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toBe(`through-the-gateway\n${user}\n`);
  });

  it("copies 20 MB each way byte-identical", () => {
    const config = configFor();
    const data = randomBytes(20 * 1024 * 1024);
    const target = path.join(dir, `upload-${name.replace(/\W+/g, "-")}`);
    const up = run("ssh", ["-F", config, ALIAS, `cat > ${target}`], { input: data, env: env() });
    expect(up.status, up.stderr).toBe(0);
    expect(sha256(readFileSync(target))).toBe(sha256(data));
    const down = run("ssh", ["-F", config, ALIAS, `cat ${target}`], { env: env() });
    expect(down.status, down.stderr).toBe(0);
    expect(down.stdout.length).toBe(data.length);
    expect(sha256(down.stdout)).toBe(sha256(data));
    rmSync(target);
  });
});

describe("a CONNECT to an undeclared target", () => {
  it("is refused by the gateway with one clear line from connect-proxy (undeclared port)", () => {
    const result = run("entryway", ["connect-proxy", `127.0.0.1:${proxyPort}`, workspaceHost, String(sshPort + 1)], { input: "", env: env() });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^entryway connect-proxy: the gateway 127\\.0\\.0\\.1:${proxyPort} refused localhost:${sshPort + 1}: 403 .*\\(the gateway does not allow this connection from here\\)$`));
  });

  it("is refused for an undeclared host too, and ssh shows the line and fails", () => {
    const config = path.join(dir, "undeclared.config");
    writeFileSync(config, sshConfigBlock({ alias: "other", hostName: "127.0.0.2", port: sshPort, user, gateway: `127.0.0.1:${proxyPort}`, proxy: "entryway", identityFile: key }) + `  UserKnownHostsFile ${knownHosts}\n  BatchMode yes\n`);
    const result = run("ssh", ["-F", config, "other", "true"], { env: env() });
    expect(result.status).toBe(255);
    expect(result.stderr).toMatch(new RegExp(`entryway connect-proxy: the gateway 127\\.0\\.0\\.1:${proxyPort} refused 127\\.0\\.0\\.2:${sshPort}: 403 `));
  });

  it("is refused through proxytunnel as well (ssh fails, nothing reaches sshd)", () => {
    const config = path.join(dir, "undeclared-pt.config");
    writeFileSync(config, sshConfigBlock({ alias: "other", hostName: "127.0.0.2", port: sshPort, user, gateway: `127.0.0.1:${proxyPort}`, identityFile: key }) + `  UserKnownHostsFile ${knownHosts}\n  BatchMode yes\n`);
    const result = run("ssh", ["-F", config, "other", "true"], { env: env() });
    expect(result.status).toBe(255);
    expect(result.stdout.toString()).toBe("");
  });

  it("TLS: connect-proxy refuses a gateway whose certificate it cannot verify, in one line", () => {
    const result = run("entryway", ["connect-proxy", "--tls", `localhost:${tlsPort}`, workspaceHost, String(sshPort)], { input: "", env: env() });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^entryway connect-proxy: cannot reach the gateway localhost:\d+: .*(certificate|issuer)/);
  });
});

describe("the image's sshd_config and entrypoint, with Debian's real sshd", () => {
  const imageConfig = path.join(repoRoot, "images/ssh-workspace/sshd_config");
  const hostKey = () => path.join(dir, "hostkey", "ssh_host_ed25519_key");

  it("passes sshd -t, and sshd -T shows keys-only, no root, local forwarding only", () => {
    const check = run("/usr/sbin/sshd", ["-t", "-f", imageConfig, "-h", hostKey()]);
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
    const effective = run("/usr/sbin/sshd", ["-T", "-f", imageConfig, "-h", hostKey(), "-C", "user=dev,host=gw,addr=10.0.0.1"]).stdout.toString();
    for (const line of [
      "passwordauthentication no",
      "kbdinteractiveauthentication no",
      "permitrootlogin no",
      "pubkeyauthentication yes",
      "authorizedkeysfile /etc/entryway/keys/authorized_keys",
      "allowtcpforwarding local",
      "allowstreamlocalforwarding local",
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
    const check = run("/usr/sbin/sshd", ["-t", "-f", broken, "-h", hostKey()]);
    expect(check.status).not.toBe(0);
    expect(check.stderr).toMatch(/Bad configuration option: PasswordAuthentification/);
  });

  it("the entrypoint turned PerSourcePenalties off exactly when this sshd has it (OpenSSH >= 9.8)", () => {
    const supported = run("/usr/sbin/sshd", ["-t", "-f", imageConfig, "-h", hostKey(), "-o", "PerSourcePenalties=no"]).status === 0;
    // sshd rewrites its process title to "sshd: <its command line> [listener] ...".
    const title = readFileSync(`/proc/${sshdChild!.pid}/cmdline`, "utf8").replace(/\0/g, " ");
    expect(title).toMatch(/^sshd: \/usr\/sbin\/sshd -D -e /); // exec'd: the entrypoint's shell is gone
    expect(title).toContain(` -p ${sshPort} `);
    expect(title.includes("-o PerSourcePenalties=no")).toBe(supported);
    expect(title).toContain(`-o AllowUsers=${user}`);
  });

  it.runIf(isRoot)("the entrypoint refuses to run sshd as root unless told to", () => {
    const result = run("sh", [path.join(repoRoot, "images/ssh-workspace/entrypoint.sh")], { env: { ...process.env, ENTRYWAY_ALLOW_ROOT: "" } });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/refusing to run sshd as root/);
  });
});

describe.runIf(canRunAsOtherUser)("sshd as the workspace user (non-root, no capabilities), as in the pod", () => {
  const uid = 4242;
  const wsUser = "wsdev";
  const nrDir = path.join(dir, "nonroot");
  let nonRootSshd: ChildProcess | undefined;

  beforeAll(async () => {
    mkdirSync(path.join(nrDir, "home"), { recursive: true });
    mkdirSync(path.join(nrDir, "run"));
    chmodSync(nrDir, 0o755);
    for (const sub of ["home", "run"]) spawnSync("chown", [`${uid}:${uid}`, path.join(nrDir, sub)]);
    writeFileSync(path.join(nrDir, "passwd"), `${wsUser}:x:${uid}:${uid}:workspace:${path.join(nrDir, "home")}:/bin/sh\n`, { mode: 0o644 });
    writeFileSync(path.join(nrDir, "group"), `${wsUser}:x:${uid}:\n`, { mode: 0o644 });
    const config = path.join(nrDir, "sshd_config");
    writeFileSync(config, readFileSync(path.join(repoRoot, "images/ssh-workspace/sshd_config"), "utf8").replace(/^ListenAddress .*$/m, "ListenAddress 127.0.0.1"), { mode: 0o644 });
    // The keys stay root-owned and read-only, as a Secret volume is.
    nonRootSshd = start("sshd (non-root)", "setpriv", [
      `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
      "sh", path.join(repoRoot, "images/ssh-workspace/entrypoint.sh"),
      "-o", `AuthorizedKeysFile=${path.join(dir, "authorized_keys")}`,
      "-o", `PidFile=${path.join(nrDir, "run", "sshd.pid")}`,
    ], {
      PATH: process.env.PATH,
      LD_PRELOAD: NSS_WRAPPER,
      NSS_WRAPPER_PASSWD: path.join(nrDir, "passwd"),
      NSS_WRAPPER_GROUP: path.join(nrDir, "group"),
      HOME: path.join(nrDir, "home"),
      ENTRYWAY_SSHD_PORT: String(nonRootPort),
      ENTRYWAY_SSHD_CONFIG: config,
    });
    await waitForPort(nonRootPort, nonRootSshd, "sshd (non-root)");
    const hostKey = readFileSync(path.join(nrDir, "home", ".entryway", "ssh_host_ed25519_key.pub"), "utf8");
    writeFileSync(path.join(nrDir, "known_hosts"), `[${workspaceHost}]:${nonRootPort} ${hostKey}`);
    writeFileSync(path.join(nrDir, "ssh.config"), sshConfigBlock({ alias: "ws-nonroot", hostName: workspaceHost, port: nonRootPort, user: wsUser, gateway: `127.0.0.1:${proxyPort}`, identityFile: key }) +
      `  UserKnownHostsFile ${path.join(nrDir, "known_hosts")}\n  StrictHostKeyChecking yes\n  BatchMode yes\n`);
  });

  it("made its host key on the home volume and runs without root or capabilities", () => {
    const status = readFileSync(`/proc/${nonRootSshd!.pid}/status`, "utf8");
    expect(status).toMatch(new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, "m"));
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^CapPrm:\s+0+$/m);
  });

  it("logs the workspace user in through the gateway with the generated block", () => {
    const result = run("ssh", ["-F", path.join(nrDir, "ssh.config"), "ws-nonroot", "id -u; echo $HOME"], { env: env() });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toBe(`${uid}\n${path.join(nrDir, "home")}\n`);
  });

  it("serves scp/sftp (internal-sftp) to the workspace user through the gateway", () => {
    const config = path.join(nrDir, "ssh.config");
    const data = randomBytes(256 * 1024);
    const local = path.join(dir, "scp-source");
    writeFileSync(local, data);
    const up = run("scp", ["-q", "-F", config, local, "ws-nonroot:copied"], { env: env() });
    expect(up.stderr).toBe("");
    expect(up.status).toBe(0);
    expect(sha256(readFileSync(path.join(nrDir, "home", "copied")))).toBe(sha256(data));
  });

  it("refuses any other user: sshd can log in only the user it runs as", () => {
    const config = path.join(nrDir, "ssh-root.config");
    writeFileSync(config, sshConfigBlock({ alias: "ws-nonroot", hostName: workspaceHost, port: nonRootPort, user: "root", gateway: `127.0.0.1:${proxyPort}`, identityFile: key }) +
      `  UserKnownHostsFile ${path.join(nrDir, "known_hosts")}\n  StrictHostKeyChecking yes\n  BatchMode yes\n`);
    const result = run("ssh", ["-F", config, "ws-nonroot", "true"], { env: env() });
    expect(result.status).toBe(255);
    expect(result.stderr).toMatch(/Permission denied \(publickey\)/);
  });
});
