// `entryway enter <target>`: a shell in a container through the exec gateway, like LAIN's `lain enter`.
// The local terminal goes raw for the session and is restored on every way out; terminal size changes
// (SIGWINCH) become WINCH messages. When stdin or stdout is not a terminal the session runs in pipe
// mode (the gateway's tty=false): no remote terminal, stdout and stderr apart, and the end of stdin
// passed on as EOF. The process exits with the remote shell's exit code, or with one of the codes in
// enter-options.ts after one line on stderr.
import { rootCertificates } from "node:tls";
import { parseOperands } from "./args.js";
import WebSocket from "ws";
import { VERSION_HEADER } from "../version.js";
import { ConnectDeadline } from "./deadline.js";
import { exitCodeHelp } from "./exit-codes.js";
import { decodeResponse, encodeRequest, RequestType, ResponseType, type Response } from "../protocol.js";
import { INPUT_FRAME_BYTES } from "../wire.js";
import type { Readable, Writable } from "node:stream";
import {
  classifyConnectError,
  classifyHttpStatus,
  endpointUrl,
  EnterError,
  exitCodeForClose,
  ExitCode,
  parseEnterTarget,
  readCaFile,
  reportFailure,
  resolveSettings,
  type EnterTarget,
} from "./enter-options.js";

const HELP = `usage: entryway enter [options] <target> [-- <command> [args...]]

Opens a shell (or the command after --, when the gateway allows it) in a running container through
the Entryway exec gateway.

targets:
  <container>                                 a Docker container, by name or full id (Docker backend)
  <namespace>/<pod>[/<container>]             a container of a Kubernetes pod
  <namespace>/<workload>#<n>[/<container>]    instance n of a workload, stable across pod restarts;
                                              <workload> is <name>, statefulset/<name> or deployment/<name>
  e.g.  entryway enter web-1
        entryway enter shop/api-7c9f8-x2x4q/app
        entryway enter shop/statefulset/db#0

options:
  -g, --gateway <url>        the gateway: https://host, or the WebSocket URL wss://host/v1/enter
  -t, --token <token>        access token (visible to other local users in ps: prefer the next two)
      --tty                  run on a remote terminal even when stdin or stdout is not one
  -T, --no-tty               pipe mode even on a terminal (kubectl exec -i without -t)
      --token-file <path>    read the access token from a file
  -c, --container <name>     the container in the pod (Kubernetes targets)
      --debug[=<image>]      a shell in a debug container added to the pod, in the target
                             container's processes (Kubernetes; the gateway's default image, or
                             one from its allow-list); --debug=auto only when the target has no shell
      --ca-file <path>       trust this CA (PEM) for a wss:// gateway, besides the system's
      --insecure             allow a plain http:// or ws:// gateway that is not on this machine
                             (the token then crosses the network unencrypted)
      --connect-timeout <s>  give up connecting after this many seconds (default 10): one deadline
                             for TCP connect, TLS handshake, WebSocket upgrade and authorization
      --keepalive <s>        ping the gateway this often; no answer by the next ping ends the
                             session (default 15; 0 turns it off)
      --context <name>       the context of the config file to use (default: its current one;
                             entryway config get-contexts)
      --config <path>        the client config file
  -h, --help                 this text

Settings, highest precedence first: flags; ENTRYWAY_GATEWAY, ENTRYWAY_TOKEN, ENTRYWAY_TOKEN_FILE,
ENTRYWAY_CA_FILE, ENTRYWAY_CONNECT_TIMEOUT, ENTRYWAY_KEEPALIVE; the context (--context, else
ENTRYWAY_CONTEXT, else the current one) of the config file (--config, else ENTRYWAY_CLIENT_CONFIG,
else $XDG_CONFIG_HOME/entryway/client.json): its gateway, auth, namespace and container (a
<pod> or <workload>#<n> without a namespace is in the context's). See entryway config --help.
A context whose auth is oidc, and no token from any of them, take the sign-in's (entryway login),
refreshed when it is about to expire.

Pipe mode: when stdin or stdout is not a terminal (or with -T), the command runs without a remote
terminal, as kubectl exec -i does: its stdout comes out on stdout and its stderr on stderr, byte for
byte; the end of stdin is passed on, and the exit status is the command's:
  echo 'ls /' | entryway enter web-1 > out.txt
  entryway enter web-1 -- tar cf - -C /data . > data.tar
(-t is --token, as before, so forcing a terminal is --tty.) With --tty and piped input, the input is
typed on the remote terminal and followed by ^D; its prompt and echo then appear in the output. Pipe
mode needs a gateway that knows it; on Kubernetes, one whose API server speaks v5.channel.k8s.io to
pass the end of stdin.

exit status: the remote shell's exit code; or, after one line on stderr starting with "entryway:",
one of entryway's codes (the same for every command):
${exitCodeHelp()}  128+n  ended by signal n (SIGHUP 129, SIGINT 130, SIGTERM 143)
`;

const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

/** The size to report: the terminal on stdout, else on stderr; none when neither is a terminal. */
function terminalSize(): { cols: number; rows: number } | null {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.isTTY && stream.columns > 0 && stream.rows > 0) return { cols: stream.columns, rows: stream.rows };
  }
  return null;
}

/** The options that say how to reach the gateway, shared with `entryway cp`. */
export const CONNECTION_OPTIONS = {
  gateway: { type: "string", short: "g" },
  token: { type: "string", short: "t" },
  "token-file": { type: "string" },
  container: { type: "string", short: "c" },
  "ca-file": { type: "string" },
  insecure: { type: "boolean" },
  "connect-timeout": { type: "string" },
  keepalive: { type: "string" },
  config: { type: "string" },
  context: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type ConnectionValues = {
  [K in keyof typeof CONNECTION_OPTIONS]?: (typeof CONNECTION_OPTIONS)[K]["type"] extends "string" ? string : boolean;
};

export interface SessionSettings {
  url: URL;
  token: string;
  connectTimeoutMs: number;
  keepaliveMs: number;
  ca?: Buffer;
}

/**
 * Settings (flags, environment, the context) and the endpoint URL for one session; `target` is the
 * target's text, read with the context's default namespace and container; `debug` is the gateway's debug option.
 */
export async function sessionSettings(
  values: ConnectionValues,
  targetText: string,
  command: string[],
  pipe: boolean,
  debug?: string,
): Promise<SessionSettings & { target: EnterTarget }> {
  const settings = await resolveSettings(
    {
      gateway: values.gateway,
      token: values.token,
      tokenFile: values["token-file"],
      caFile: values["ca-file"],
      connectTimeout: values["connect-timeout"],
      keepalive: values.keepalive,
      config: values.config,
      context: values.context,
    },
    process.env,
  );
  const target = parseEnterTarget(targetText, values.container, settings);
  const url = endpointUrl(settings.gateway, target, command, values.insecure);
  if (pipe) url.searchParams.set("tty", "false");
  if (debug !== undefined) url.searchParams.set("debug", debug);
  const caText = readCaFile(settings);
  const ca = caText === undefined ? undefined : Buffer.from(caText);
  return {
    target,
    url,
    token: settings.token,
    connectTimeoutMs: settings.connectTimeoutSeconds * 1000,
    keepaliveMs: settings.keepaliveSeconds * 1000,
    ...(ca ? { ca } : {}),
  };
}

export const options = {
  ...CONNECTION_OPTIONS,
  tty: { type: "boolean" },
  "no-tty": { type: "boolean", short: "T" },
  debug: { type: "string" },
} as const;

export async function run(argv: string[]): Promise<number> {
  const split = argv.indexOf("--");
  const own = split >= 0 ? argv.slice(0, split) : argv;
  const command = split >= 0 ? argv.slice(split + 1) : [];
  try {
    const parsed = parseOperands(
      // parseArgs has no optional values: a bare --debug is --debug=true (the gateway's default image).
      own.map((arg) => (arg === "--debug" ? "--debug=true" : arg)),
      options,
      HELP,
      1,
      (given) =>
        given.length === 0 ? "name a target (entryway enter --help)" : `one target at a time, got ${given.join(" ")}`,
    );
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    if (values.tty && values["no-tty"])
      throw new EnterError(ExitCode.usage, "--tty and --no-tty (-T) contradict each other");
    const pipe = values["no-tty"] === true || (!values.tty && !(process.stdin.isTTY && process.stdout.isTTY));
    if (values.debug === "")
      throw new EnterError(ExitCode.usage, "--debug= needs an image, or use --debug alone for the gateway's default");
    const settings = await sessionSettings(values, positionals[0]!, command, pipe, values.debug);
    if (values.debug !== undefined && settings.target.kind === "docker")
      throw new EnterError(ExitCode.usage, "--debug is for Kubernetes targets (a debug container is added to a pod)");
    return await runSession(settings, pipe);
  } catch (error) {
    return reportFailure(error, "enter");
  }
}

/** Stop reading stdin while this much input waits to go out to the gateway; read again below a quarter of it. */
const INPUT_WINDOW_BYTES = 1024 * 1024;

/**
 * One session until it ends; resolves to the exit code. `io` replaces stdin and stdout (and stderr)
 * in pipe mode (`entryway cp` feeds an archive in, or reads one out, and reads tar's messages).
 */
export function runSession(
  { url, token, connectTimeoutMs, keepaliveMs, ca }: SessionSettings,
  pipe: boolean,
  io: { input: Readable; output: Writable; errors?: Writable; signal?: AbortSignal } = {
    input: process.stdin,
    output: process.stdout,
  },
): Promise<number> {
  const stdin = io.input as Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => void };
  const interactive = !pipe && stdin.isTTY === true;
  // Node's TLS defaults plus the given CA: `ca` alone would replace the system's roots.
  const tlsOptions = ca ? { ca: [...rootCertificates, ca.toString("utf8")] } : {};
  return new Promise<number>((resolve) => {
    let raw = false;
    let finished = false;
    let opened = false;
    let closeMessage: Response | undefined;
    let failure: EnterError | undefined;
    // One timer from here to the gateway's first message (deadline.ts); a gateway that says it sends
    // one once the session is authorized and open (the entryway-version header) is waited for, an
    // older one (or Entry's) only to the upgrade.
    const deadline = new ConnectDeadline(connectTimeoutMs, (expired) => {
      failure = new EnterError(
        ExitCode.network,
        `cannot reach the gateway at ${url.protocol}//${url.host}: ${expired.describe()}`,
      );
      ws.terminate();
    });
    const ws = new WebSocket(url, {
      headers: { "access-token": token },
      perMessageDeflate: false,
      createConnection: deadline.connector(url.protocol === "wss:", "WebSocket upgrade"),
      ...tlsOptions,
    });
    ws.on("upgrade", (response) => {
      if (response.headers[VERSION_HEADER]) deadline.enter("authorization");
      else deadline.met();
    });
    let lastInputByte = -1;
    // A gateway that vanished without closing (a laptop asleep, a NAT that forgot us) answers no ping.
    let awaitingPong = false;
    let keepalive: NodeJS.Timeout | undefined;
    const pending: Buffer[] = [];

    const restoreTerminal = () => {
      if (raw) {
        raw = false;
        try {
          stdin.setRawMode!(false);
        } catch {
          // the terminal is gone
        }
      }
    };
    // Last resort: whatever ends the process (an exception included) leaves the terminal usable.
    process.once("exit", restoreTerminal);

    // Input backpressure: bulk input (pipe mode) must not pile up in memory faster than the gateway takes it.
    let inputPaused = false;
    const send = (msgType: number, content: Buffer | string) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(encodeRequest(msgType, content), () => {
        if (inputPaused && ws.bufferedAmount < INPUT_WINDOW_BYTES / 4) {
          inputPaused = false;
          stdin.resume();
        }
      });
      if (!inputPaused && ws.bufferedAmount > INPUT_WINDOW_BYTES) {
        inputPaused = true;
        stdin.pause();
      }
    };
    const sendSize = () => {
      if (pipe) return; // no remote terminal to size
      const size = terminalSize();
      if (size) send(RequestType.WINCH, `${size.cols} ${size.rows}`);
    };
    const onResize = () => sendSize();
    const onInput = (data: Buffer) => {
      if (data.length > 0) lastInputByte = data[data.length - 1]!;
      for (let offset = 0; offset < data.length; offset += INPUT_FRAME_BYTES) {
        const chunk = data.subarray(offset, offset + INPUT_FRAME_BYTES);
        if (opened) send(RequestType.PLAIN, chunk);
        else pending.push(chunk);
      }
    };
    // Piped input has ended. The remote side still runs on a terminal, where EOF is ^D at the start of
    // a line, and a shell can miss the first one (typed ahead while it set its terminal up, or read
    // by a command it runs). So: ^D now (after ending a partial last line), then again each second
    // once the output has been quiet for a moment, until the session ends. Like a pipe's EOF, every
    // later read of the terminal sees end of input.
    let lastOutput = Date.now();
    let eofTimer: NodeJS.Timeout | undefined;
    const sendEof = (text: string) => {
      if (opened) send(RequestType.PLAIN, text);
      else pending.push(Buffer.from(text));
    };
    let pendingEof = false;
    const onInputEnd = () => {
      if (pipe) {
        if (opened) send(RequestType.EOF, "");
        else pendingEof = true;
        return;
      }
      sendEof(lastInputByte === 0x0a || lastInputByte === 0x0d || lastInputByte === -1 ? "\x04" : "\n\x04");
      let lastEof = Date.now();
      eofTimer = setInterval(() => {
        const now = Date.now();
        if (!opened || now - lastOutput < 300 || now - lastEof < 1000) return;
        lastEof = now;
        sendEof("\x04");
      }, 250);
    };
    const signalHandlers = Object.entries(SIGNALS).map(([signal, number]) => {
      const handler = () => finish(128 + number, `ended by ${signal}`);
      process.on(signal, handler);
      return () => process.off(signal, handler);
    });

    function finish(code: number, line: string | null): void {
      if (finished) return;
      finished = true;
      deadline.met();
      restoreTerminal();
      process.off("exit", restoreTerminal);
      for (const off of signalHandlers) off();
      process.stdout.off("resize", onResize);
      stdin.off("data", onInput);
      stdin.off("end", onInputEnd);
      clearInterval(eofTimer);
      clearInterval(keepalive);
      stdin.pause();
      stdin.destroy();
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
      // In raw mode the cursor may be mid-line: start the message on a fresh line.
      if (line) process.stderr.write(`${interactive && opened ? "\r\n" : ""}entryway: ${line}\n`);
      resolve(code);
    }

    // `entryway cp` ends the session when the archive it unpacks is refused: the reason is an EnterError.
    io.signal?.addEventListener("abort", () => {
      const reason = io.signal!.reason as EnterError;
      finish(reason.exitCode, reason.message);
    });
    stdin.on("data", onInput);
    stdin.on("end", onInputEnd);
    if (!interactive) stdin.resume();

    ws.on("open", () => {
      opened = true;
      if (interactive) {
        stdin.setRawMode!(true);
        raw = true;
        stdin.resume();
      }
      sendSize(); // Entry's flow: the size right after connecting, then on every change
      process.stdout.on("resize", onResize);
      for (const chunk of pending.splice(0)) send(RequestType.PLAIN, chunk);
      if (pendingEof) send(RequestType.EOF, "");
      if (keepaliveMs > 0) {
        keepalive = setInterval(() => {
          if (awaitingPong) {
            failure = new EnterError(
              ExitCode.network,
              `connection to the gateway lost: no answer to a ping in ${keepaliveMs / 1000} s`,
            );
            ws.terminate();
            return;
          }
          awaitingPong = true;
          ws.ping();
        }, keepaliveMs);
      }
    });
    ws.on("pong", () => (awaitingPong = false));
    // Output backpressure: a slow reader of our stdout (a pipe into a slow command) slows the gateway down.
    const writeOutput = (stream: Writable, data: Buffer) => {
      if (stream.write(data) || ws.isPaused) return;
      ws.pause();
      stream.once("drain", () => ws.resume());
    };
    ws.on("message", (data: Buffer) => {
      awaitingPong = false;
      deadline.met();
      let message: Response;
      try {
        message = decodeResponse(data);
      } catch {
        failure = new EnterError(ExitCode.badRequest, "the gateway sent a message this client cannot read");
        ws.terminate();
        return;
      }
      switch (message.msgType) {
        case ResponseType.STDOUT:
          lastOutput = Date.now();
          return writeOutput(io.output, message.content);
        case ResponseType.STDERR:
          return writeOutput(io.errors ?? process.stderr, message.content);
        case ResponseType.CLOSE:
          closeMessage = message;
          return;
        default:
          return; // PING and newer types
      }
    });
    ws.on("unexpected-response", (_request, response) => {
      failure = classifyHttpStatus(response.statusCode ?? 0, url);
      response.resume();
      ws.terminate();
    });
    ws.on("error", (error: Error & { code?: string }) => {
      if (failure) return;
      failure = opened
        ? new EnterError(ExitCode.network, `connection to the gateway lost: ${error.message}`)
        : classifyConnectError(error, url);
    });
    ws.on("close", (wsCode) => {
      if (closeMessage) {
        const reason = closeMessage.content.toString("utf8");
        const closeCode = closeMessage.closeCode;
        // Entry's own gateway sends no closeCode: its CLOSE is the end of the session.
        if (!closeCode || closeCode === "exit") return finish(closeMessage.exitCode ?? 0, null);
        return finish(exitCodeForClose(closeCode), reason || closeCode);
      }
      if (failure) return finish(failure.exitCode, failure.message);
      finish(
        ExitCode.network,
        opened
          ? `connection to the gateway lost (WebSocket close ${wsCode})`
          : `cannot reach the gateway at ${url.protocol}//${url.host}`,
      );
    });
  });
}
