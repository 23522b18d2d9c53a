/**
 * The ~/.ssh/config block that reaches an SSH workspace through an Entryway CONNECT gateway.
 *
 * sshConfigBlock() is the ONE place the block is written: the SshWorkspace Pulumi component
 * (package `entryway`, components/ssh/) returns it as its `sshConfig` output and `entryway
 * ssh-config` (package `@entryway/gateway`) prints it, and `entryway connect-proxy` reads its
 * gateway argument with parseHostPort(). Both packages depend on this one, which is pure and
 * imports nothing, and is built as CommonJS so either can load it (the library is CommonJS, the
 * gateway an ES module).
 */
/** One workspace as the user's ssh client sees it. */
export interface SshConfigEntry {
  /** The `Host` alias the user types: `ssh <alias>`. */
  readonly alias: string;
  /** The workspace Service's in-cluster name (the gateway routes CONNECT by `<hostName>:<port>`). */
  readonly hostName: string;
  /** The workspace Service port (default 22). */
  readonly port?: number;
  /** The login user inside the workspace. */
  readonly user: string;
  /** The gateway as the user reaches it: `host:port`. */
  readonly gateway: string;
  /** TLS on the CONNECT hop (the gateway terminates TLS). */
  readonly tls?: boolean;
  /** A CA file that signs the gateway's certificate (TLS only; default: the system's CAs). */
  readonly caFile?: string;
  /** The private key to offer (default: ssh's own defaults). */
  readonly identityFile?: string;
  /**
   * The ProxyCommand: the built-in `entryway connect-proxy` (default), which turns a refused CONNECT
   * into one line naming the status and the target, or Debian's `proxytunnel` (run with `-q`, which
   * keeps it silent on success but also hides why the gateway refused: ssh then shows only
   * "kex_exchange_identification: Connection closed").
   */
  readonly proxy?: "proxytunnel" | "entryway";
  /** Seconds between keep-alives, so idle sessions are neither cut nor left half-open (default 30). */
  readonly serverAliveInterval?: number;
}

const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const HOST = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const USER = /^[a-z_][a-z0-9_-]*[$]?$/;
// Paths go into a ProxyCommand (run by a shell) or an ssh option: no spaces, quotes, `%` or `$`.
const PATH = /^[A-Za-z0-9_.,:~/\\+@-]+$/;

function checkPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${what} must be a port number from 1 to 65535, not ${port}`);
  }
  return port;
}

/** Splits and checks `host:port`. */
export function parseHostPort(value: string, what = "gateway"): { host: string; port: number } {
  const match = /^(.+):(\d+)$/.exec(value);
  if (!match) {
    throw new Error(`${what} must be host:port, not ${JSON.stringify(value)}`);
  }
  const host = match[1];
  if (!HOST.test(host) && !IPV4.test(host)) {
    throw new Error(`${what} host ${JSON.stringify(host)} is not a DNS name or IPv4 address`);
  }
  return { host, port: checkPort(Number(match[2]), `${what} port`) };
}

/** The ProxyCommand that opens the CONNECT tunnel to %h:%p through the gateway. */
export function proxyCommand(entry: Pick<SshConfigEntry, "gateway" | "tls" | "caFile" | "proxy">): string {
  const { host, port } = parseHostPort(entry.gateway);
  if (entry.caFile !== undefined && !PATH.test(entry.caFile)) {
    throw new Error(`caFile ${JSON.stringify(entry.caFile)} must be a path without spaces, quotes, '%' or '$'`);
  }
  if (entry.caFile !== undefined && !entry.tls) {
    throw new Error("caFile is only meaningful with tls");
  }
  const ca = entry.caFile;
  if (entry.proxy === "proxytunnel") {
    return [
      "proxytunnel",
      "-q",
      ...(entry.tls ? ["-E"] : []),
      ...(ca ? ["-C", ca] : []),
      "-p",
      `${host}:${port}`,
      "-d",
      "%h:%p",
    ].join(" ");
  }
  if ((entry.proxy ?? "entryway") !== "entryway") {
    throw new Error(`proxy must be "proxytunnel" or "entryway", not ${JSON.stringify(entry.proxy)}`);
  }
  return [
    "entryway",
    "connect-proxy",
    ...(entry.tls ? ["--tls"] : []),
    ...(ca ? ["--ca-file", ca] : []),
    `${host}:${port}`,
    "%h",
    "%p",
  ].join(" ");
}

/** The `Host` block for one workspace, ending with a newline. Throws on values ssh would misread. */
export function sshConfigBlock(entry: SshConfigEntry): string {
  if (!ALIAS.test(entry.alias)) {
    throw new Error(
      `alias ${JSON.stringify(entry.alias)} must be letters, digits, '.', '_' or '-' (no spaces or patterns)`,
    );
  }
  if (!HOST.test(entry.hostName) && !IPV4.test(entry.hostName)) {
    throw new Error(`hostName ${JSON.stringify(entry.hostName)} is not a DNS name or IPv4 address`);
  }
  if (!USER.test(entry.user) || entry.user.length > 32) {
    throw new Error(`user ${JSON.stringify(entry.user)} is not a valid login name`);
  }
  if (entry.identityFile !== undefined && !PATH.test(entry.identityFile)) {
    throw new Error(
      `identityFile ${JSON.stringify(entry.identityFile)} must be a path without spaces, quotes, '%' or '$'`,
    );
  }
  const interval = entry.serverAliveInterval ?? 30;
  if (!Number.isInteger(interval) || interval < 0) {
    throw new Error(`serverAliveInterval must be a whole number of seconds, not ${interval}`);
  }
  const lines = [
    `Host ${entry.alias}`,
    `  HostName ${entry.hostName}`,
    `  Port ${checkPort(entry.port ?? 22, "port")}`,
    `  User ${entry.user}`,
    `  ProxyCommand ${proxyCommand(entry)}`,
    `  ServerAliveInterval ${interval}`,
    ...(entry.identityFile ? [`  IdentityFile ${entry.identityFile}`, "  IdentitiesOnly yes"] : []),
  ];
  return lines.join("\n") + "\n";
}
