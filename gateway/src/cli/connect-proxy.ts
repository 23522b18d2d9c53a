/**
 * `entryway connect-proxy <gateway-host:port> <host> <port>`: a built-in ssh ProxyCommand for
 * machines without proxytunnel (Windows). It opens a connection to the CONNECT gateway (TLS
 * optional, with a CA file), asks for `<host>:<port>` with HTTP/1.1 CONNECT, and then copies
 * stdin to the tunnel and the tunnel to stdout. A refusal (404: no workspace is declared at that
 * address; 403: not allowed from here) becomes one line on stderr and an exit code of the CLI's one
 * table (exit-codes.ts). One deadline (--timeout) covers TCP connect, TLS handshake and the answer
 * to CONNECT; the line names the stage it ran out in.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { parseHostPort } from "@entryway/ssh-config";
import { parseCommand } from "./args.js";
import { isTlsError } from "./enter-options.js";
import { CliError, ExitCode } from "./exit-codes.js";

const USAGE = `usage: entryway connect-proxy [--tls] [--ca-file <path>] [--insecure-skip-verify] [--timeout <seconds>] <gateway-host:port> <host> <port>

A ProxyCommand for ssh: ProxyCommand entryway connect-proxy ssh.example.com:2222 %h %p
--timeout (default 10) is the deadline for TCP connect, TLS handshake and the answer to CONNECT together.
Exit status: entryway's table (entryway --help); 66 no such workspace, 69 unreachable, 77 refused.
`;

/** How a refusal's status maps into the exit-code table. */
const STATUS_EXIT: Record<number, number> = {
  400: ExitCode.badRequest,
  403: ExitCode.denied,
  404: ExitCode.notFound,
  405: ExitCode.badRequest,
  407: ExitCode.denied,
  502: ExitCode.backend,
  503: ExitCode.backend,
  504: ExitCode.backend,
};

const MAX_HEADER = 16 * 1024;

const EXPLAIN: Record<number, string> = {
  400: "the gateway did not understand the request",
  403: "the gateway does not allow this connection from here",
  404: "no workspace is declared at that address on this gateway",
  405: "the gateway does not accept CONNECT on this port",
  407: "the gateway wants proxy authentication",
  502: "the gateway could not reach the workspace",
  503: "the workspace is not available",
  504: "the gateway timed out reaching the workspace",
};

export interface ConnectOptions {
  readonly gateway: string;
  readonly host: string;
  readonly port: number;
  readonly tls?: boolean;
  readonly ca?: Buffer;
  readonly rejectUnauthorized?: boolean;
  /** The deadline for TCP connect, TLS handshake and the answer to CONNECT together, in milliseconds (default 10 s). */
  readonly timeoutMs?: number;
}

/** Thrown when the tunnel cannot be opened; the message is the one line the user sees. */
export class ConnectError extends CliError {
  override readonly name = "ConnectError";
}

/**
 * Opens the tunnel. Resolves with the socket (already past the gateway's response) and any bytes
 * that arrived after the response head, which belong to the tunnelled stream.
 */
export function openTunnel(options: ConnectOptions): Promise<{ socket: net.Socket; rest: Buffer }> {
  const gateway = parseHostPort(options.gateway);
  const target = `${options.host}:${options.port}`;
  return new Promise((resolve, reject) => {
    let stage = "TCP connect to";
    const onConnect = () => {
      stage = "an answer to CONNECT from";
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nUser-Agent: entryway-connect-proxy\r\n\r\n`);
    };
    const socket: net.Socket = options.tls
      ? tls.connect(
          {
            host: gateway.host,
            port: gateway.port,
            servername: net.isIP(gateway.host) ? undefined : gateway.host,
            ca: options.ca,
            rejectUnauthorized: options.rejectUnauthorized ?? true,
            minVersion: "TLSv1.2",
          },
          onConnect,
        )
      : net.connect({ host: gateway.host, port: gateway.port }, onConnect);
    socket.once("connect", () => {
      if (options.tls) stage = "TLS handshake with";
    });
    let head = Buffer.alloc(0);
    const fail = (message: string, exitCode: number = ExitCode.network) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectError(exitCode, message));
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEADER)
          fail(`the gateway ${options.gateway} sent an over-long response to CONNECT ${target}`);
        return;
      }
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("end", onEnd);
      const statusLine = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      const match = /^HTTP\/\d(?:\.\d)? (\d{3})(?: (.*))?$/.exec(statusLine);
      if (!match) {
        fail(
          `the gateway ${options.gateway} did not answer CONNECT ${target} with HTTP (got ${JSON.stringify(statusLine.slice(0, 80))})`,
          ExitCode.badRequest,
        );
        return;
      }
      const status = Number(match[1]);
      if (status < 200 || status > 299) {
        const reason = match[2]?.trim() || "";
        const why = EXPLAIN[status] ?? "the gateway refused the tunnel";
        fail(
          `the gateway ${options.gateway} refused ${target}: ${status}${reason ? ` ${reason}` : ""} (${why})`,
          STATUS_EXIT[status] ?? ExitCode.network,
        );
        return;
      }
      clearTimeout(timer);
      socket.pause();
      resolve({ socket, rest: head.subarray(end + 4) });
    };
    const onError = (error: Error & { code?: string }) =>
      isTlsError(error)
        ? fail(`TLS error with the gateway ${options.gateway}: ${error.message}`, ExitCode.tls)
        : fail(`cannot reach the gateway ${options.gateway}: ${error.message}`);
    const onEnd = () => fail(`the gateway ${options.gateway} closed the connection before answering CONNECT ${target}`);
    const timeoutMs = options.timeoutMs ?? 10_000;
    const timer = setTimeout(
      () =>
        fail(
          stage.startsWith("an answer")
            ? `the gateway ${options.gateway} did not answer CONNECT ${target} within ${timeoutMs / 1000} s`
            : `timed out after ${timeoutMs / 1000} s waiting for ${stage} the gateway ${options.gateway}`,
        ),
      timeoutMs,
    );
    socket.on("close", () => clearTimeout(timer));
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("end", onEnd);
  });
}

export const options = {
  tls: { type: "boolean", default: false },
  "ca-file": { type: "string" },
  "insecure-skip-verify": { type: "boolean", default: false },
  timeout: { type: "string", default: "10" },
} as const;

/** `entryway connect-proxy ...`: resolves to the exit code once the tunnel is over. */
export async function run(
  argv: string[],
  stdin: NodeJS.ReadableStream = process.stdin,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const parsed = parseCommand("connect-proxy", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 3) {
    process.stderr.write(`entryway connect-proxy: expected <gateway-host:port> <host> <port>\n${USAGE}`);
    return ExitCode.usage;
  }
  const [gateway, host, portText] = positionals;
  const port = Number(portText);
  let tunnel: { socket: net.Socket; rest: Buffer };
  try {
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new ConnectError(ExitCode.usage, `port must be 1-65535, not ${JSON.stringify(portText)}`);
    if (values["ca-file"] && !values.tls) throw new ConnectError(ExitCode.usage, "--ca-file needs --tls");
    const timeout = Number(values.timeout);
    if (!(timeout > 0))
      throw new ConnectError(
        ExitCode.usage,
        `--timeout must be a positive number of seconds, not ${JSON.stringify(values.timeout)}`,
      );
    let ca: Buffer | undefined;
    if (values["ca-file"]) {
      try {
        ca = readFileSync(values["ca-file"]);
      } catch (error) {
        throw new ConnectError(ExitCode.usage, `cannot read the CA file: ${(error as Error).message}`);
      }
    }
    tunnel = await openTunnel({
      gateway,
      host,
      port,
      tls: values.tls,
      ca,
      rejectUnauthorized: !values["insecure-skip-verify"],
      timeoutMs: timeout * 1000,
    });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    process.stderr.write(`entryway connect-proxy: ${error.message}\n`);
    return error.exitCode;
  }
  const { socket, rest } = tunnel;
  return new Promise<number>((resolve) => {
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      stdin.unpipe(socket);
      if ("destroy" in stdin && typeof stdin.destroy === "function") (stdin as NodeJS.ReadStream).destroy();
      resolve(code);
    };
    if (rest.length > 0) stdout.write(rest);
    socket.pipe(stdout, { end: false });
    stdin.pipe(socket);
    socket.on("end", () => {
      // The workspace closed: flush what we have and stop.
      stdout.write("", () => finish(0));
    });
    socket.on("error", (error) => {
      process.stderr.write(`entryway connect-proxy: the tunnel broke: ${error.message}\n`);
      finish(ExitCode.network);
    });
    socket.on("close", () => finish(0));
    socket.resume();
  });
}
