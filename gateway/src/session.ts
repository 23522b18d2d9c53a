// One client connection: authorize, create the exec, bridge Entry's messages both ways, end it cleanly.
import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { AuditEvent, AuditSink } from "./audit.js";
import type { Authorizer, DebugAccess, Recheck } from "./auth/authorizer.js";
import { DebugContainerError, NotFoundError, type Backend, type ExecControl, type OutputStream, type ResolvedTarget } from "./backends/backend.js";
import type { GatewayConfig } from "./config.js";
import type { DebugRequest } from "./debug.js";
import type { SessionLimits } from "./limits.js";
import { errorMessage, type Logger } from "./log.js";
import type { Metrics } from "./metrics.js";
import type { Recording, RecordingSink } from "./recording-sink.js";
import { OutputFramer } from "./output.js";
import { decodeRequest, encodeOutput, encodeResponse, parseWinch, RequestType, ResponseType, type CloseCode, type Request } from "./protocol.js";
import { padCursorReports } from "./cursor-report.js";
import { PidMarkerFilter, reapCommand, ReapResult, START_SIGNAL, wrapCommand } from "./shell.js";
import { describeTarget, type Target } from "./target.js";
import { Utf8Carry } from "./utf8.js";

export interface SessionContext {
  config: GatewayConfig;
  backend: Backend;
  authorizer: Authorizer;
  metrics: Metrics;
  audit: AuditSink;
  logger: Logger;
  limits: SessionLimits;
  /** Where sessions are recorded; null: they are not. */
  recordings: RecordingSink | null;
}

export interface SessionRequest {
  target: Target;
  /** Null when the client will send it as its first message (AUTH). */
  token: string | null;
  command: string[];
  clientAddress: string;
  /** False for pipe mode (query tty=false): no TTY, stdout and stderr apart, binary-safe, and an end of stdin (EOF). */
  tty: boolean;
  /** Enter a debug container (query debug, already checked against the allow-list); null: the target itself. */
  debug: DebugRequest | null;
}

/** Whether the target can run a shell at all: distroless images cannot (the exec itself fails). */
const SHELL_PROBE = ["/bin/sh", "-c", "exit 0"];

const DEFAULT_SIZE = { cols: 80, rows: 24 };
/** Input that arrives before the shell is ready is kept: on a TTY up to this much; pipe mode keeps all, under input backpressure. */
const MAX_EARLY_INPUT = 64 * 1024;
/** How runtimes say that the command to exec does not exist (runc: "exec: \"/bin/sh\": stat /bin/sh: no such file or directory"). */
const MISSING_EXECUTABLE = /no such file or directory|executable file not found/i;

/** How long an abandoned exec is kept open for its PID report. */
const PID_WAIT_MS = 5000;

export class Session {
  readonly id = randomUUID();
  /** Resolves when the session is over, including ending an abandoned shell. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;

  /** Resolves once the authorizer decided, or the session ended before it could. */
  readonly authSettled: Promise<void>;
  private settleAuth!: () => void;
  private user: string | undefined;
  private resolved: ResolvedTarget | undefined;
  private exec: ExecControl | undefined;
  private execEnded = false;
  private closing = false;
  /** Why the session ended, once it did. */
  private closeCode: CloseCode | undefined;
  private admitted = false;
  private readonly startedAt = new Date();
  private size = { ...DEFAULT_SIZE };
  /** Input waits here until the shell runs at the client's size (see becomeReady). */
  private ready = false;
  private readying = false;
  /** The resize in flight, if any, and whether the size changed since it was sent (applySize). */
  private sizing: Promise<void> | undefined;
  private sizeWanted = false;
  private earlyInput: Buffer[] = [];
  private earlyInputBytes = 0;
  /** Pipe mode: the client sent EOF; the backend's stdin is closed once the early input is written. */
  private stdinEnded = false;
  /** Input handed to the backend but not yet taken by it, and whether the client's socket is paused for it. */
  private inputInFlight = 0;
  private inputPaused = false;
  private bytesIn = 0;
  private bytesOut = 0;
  private lastActivity = Date.now();
  /** Why the shell's output is paused: the client's socket is behind, or the recording holds too much. */
  private readonly outputHolds = new Set<"client" | "recording">();
  /** Output frames on their way to the client (output.ts). */
  private readonly output: OutputFramer;
  private peerAlive = true;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pid = new PidMarkerFilter();
  private pidSettledNow!: () => void;
  private readonly pidSettled = new Promise<void>((resolve) => (this.pidSettledNow = resolve));
  private readonly utf8 = new Utf8Carry();
  private recording: Recording | undefined;
  private recordedSize = { ...DEFAULT_SIZE };
  private pendingAuth: ((message: Request) => void) | undefined;
  /** Aborted when the session ends: setup steps still waiting (a debug container starting) stop. */
  private readonly ended = new AbortController();
  /** When the token stops being valid (ms since the epoch), if the authorizer knows. */
  private expiresAt: number | undefined;
  /** Asks the authorizer again whether the grant still holds (see reauthorize). */
  private recheck: (() => Promise<Recheck>) | undefined;
  private rechecking = false;
  /** Ends the "wrapper" setup step: from the exec's start until the shell reported its PID. */
  private wrapperStarted: (() => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly request: SessionRequest,
    private readonly ctx: SessionContext,
  ) {
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    const { outputFrameBytes, bufferHighBytes, bufferLowBytes } = ctx.config;
    this.output = new OutputFramer((frame, written) => ws.send(frame, written), {
      frameBytes: outputFrameBytes,
      text: request.tty,
      highBytes: bufferHighBytes,
      lowBytes: bufferLowBytes,
      // Backpressure: a client that reads slowly stops the exec's output, as a terminal stops its program.
      onPause: () => this.holdOutput("client"),
      onResume: () => this.releaseOutput("client"),
    });
    this.authSettled = new Promise((resolve) => (this.settleAuth = resolve));
    ws.on("message", (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on("pong", () => (this.peerAlive = true));
    ws.on("error", (error: Error & { code?: string }) => {
      const tooLarge = error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH";
      void this.end(tooLarge ? "frame-too-large" : "client-gone", tooLarge ? "frame too large" : errorMessage(error));
    });
    ws.on("close", () => void this.end("client-gone", "client disconnected"));
  }

  get label(): string {
    return describeTarget(this.request.target);
  }

  async start(): Promise<void> {
    try {
      const token = this.request.token ?? (await this.awaitAuthMessage());
      if (this.closing) return;
      if (!token) return void (await this.end("unauthenticated", "no access token: send it in the access-token header, as a bearer token, a subprotocol or a first AUTH message"));
      const setup = this.ctx.metrics.setupSeconds;
      const authorized = setup.startTimer({ step: "authorize" });
      const decision = await this.ctx.authorizer.authorize({ token, target: this.request.target, clientAddress: this.request.clientAddress });
      authorized();
      this.settleAuth();
      if (this.closing) return;
      this.user = decision.user;
      if (!decision.allow) {
        this.ctx.metrics.denials.inc({ reason: "denied" });
        if (decision.detail) this.ctx.logger.log("warn", "authorizer failed", { session: this.id, target: this.label, error: decision.detail });
        return void (await this.end("denied", `permission denied: ${decision.reason}`));
      }
      this.expiresAt = decision.expiresAt;
      this.recheck = decision.recheck;
      const refusal = this.ctx.limits.admit(decision.user);
      if (refusal) {
        this.ctx.metrics.denials.inc({ reason: "limit" });
        return void (await this.end("limit", refusal));
      }
      this.admitted = true;
      const resolved = setup.startTimer({ step: "resolve" });
      this.resolved = await this.ctx.backend.resolve(this.request.target);
      resolved();
      if (this.closing) return;
      if (this.request.debug) {
        const debugTarget = await this.enterDebugContainer(this.resolved, this.request.debug, decision.mayDebug);
        if (!debugTarget || this.closing) return;
        this.resolved = debugTarget;
      }
      if (this.ctx.recordings && !(await this.startRecording(decision.user, this.resolved))) return;
      const command = wrapCommand(this.request.command.length > 0 ? this.request.command : this.ctx.config.shell, { terminal: this.request.tty ? this.size : undefined });
      const started = setup.startTimer({ step: "exec" });
      const exec = await this.ctx.backend.exec(
        this.resolved,
        command,
        this.size,
        {
          onOutput: (chunk, stream) => this.onOutput(chunk, stream),
          onEnd: (result) => void this.onExecEnd(result.exitCode, result.error),
        },
        { tty: this.request.tty },
      );
      started();
      this.exec = exec;
      if (!this.pid.settled) this.wrapperStarted = setup.startTimer({ step: "wrapper" });
      if (this.closing) {
        // The client left while the exec was being created: end the shell it will never use.
        return void (await this.abandonExec());
      }
      this.ctx.metrics.active.inc();
      this.audit("session.start");
      this.startTimers();
      this.becomeReady();
    } catch (error) {
      if (error instanceof NotFoundError) return void (await this.end("not-found", error.message));
      if (error instanceof DebugContainerError) {
        this.ctx.metrics.backendErrors.inc({ operation: "debug" });
        return void (await this.end("backend-error", error.message));
      }
      this.ctx.metrics.backendErrors.inc({ operation: this.exec ? "stream" : this.resolved ? "exec" : "resolve" });
      // The backend's text (client-node errors carry API response bodies) goes to the log only.
      this.ctx.logger.log("error", "session setup failed", { session: this.id, target: this.label, error: errorMessage(error) });
      await this.end("backend-error", `could not start the shell (session ${this.id}; the gateway's log has the cause)`);
    }
  }

  /**
   * The debug container to enter instead of `target`, or `target` itself when debug=auto found a
   * shell there; null when the session ended (denied). The second authorization comes before
   * anything is created; the audit record as soon as the container exists.
   */
  private async enterDebugContainer(target: ResolvedTarget, debug: DebugRequest, mayDebug: DebugAccess | undefined): Promise<ResolvedTarget | null> {
    const containers = this.ctx.backend.debugContainers;
    if (debug.when === "no-shell" && (await this.ctx.backend.run(target, SHELL_PROBE)) === 0) return target;
    const access = mayDebug && containers ? await mayDebug({ namespace: target.namespace!, pod: target.pod! }) : { allow: false as const, reason: "this gateway's authorizer cannot authorize debug containers" };
    if (this.closing) return null;
    if (!access.allow) {
      this.ctx.metrics.denials.inc({ reason: "denied" });
      if (access.detail) this.ctx.logger.log("warn", "authorizer failed", { session: this.id, target: this.label, error: access.detail });
      await this.end("denied", `permission denied: ${access.reason}`);
      return null;
    }
    const debugTarget = await containers!.create(target, debug.image, this.ctx.config.maxSessionSeconds);
    this.ctx.audit.write({
      event: "debug.container",
      session: this.id,
      user: this.user!,
      pod: `${target.namespace}/${target.pod}`,
      targetContainer: target.container,
      container: debugTarget.container,
      image: debug.image,
      client: this.request.clientAddress,
    });
    await containers!.waitUntilRunning(debugTarget, this.ctx.config.debugStartTimeoutMs, this.ended.signal);
    return debugTarget;
  }

  /**
   * Starts the recording before the shell exists: the header is stored (awaited), so a sink that
   * is full, refuses writes or cannot be reached refuses the session, and no shell is started that
   * would not be recorded. A write that fails later ends the session (recording-failed). Returns
   * false when the session ended meanwhile.
   */
  private async startRecording(user: string, target: ResolvedTarget): Promise<boolean> {
    const stored = this.ctx.metrics.setupSeconds.startTimer({ step: "record" });
    let recording: Recording;
    try {
      recording = await this.ctx.recordings!.start({ session: this.id, user, target: target.label }, this.size);
    } catch {
      // The sink logged the cause (it may name the bucket or path): the client gets the policy.
      await this.end("recording-failed", `the session's recording cannot be written, so the session is refused (session ${this.id}; the gateway's log has the cause)`);
      return false;
    }
    stored();
    if (this.closing) {
      // The session ended while the header was stored (the client left): store the recording's end too.
      void recording.finish(this.closeCode ?? "client-gone").catch(() => {});
      return false;
    }
    this.recording = recording;
    this.recordedSize = { ...this.size };
    recording.onFailure(() => void this.end("recording-failed", `the session's recording could not be written, so the session is ended (session ${this.id}; the gateway's log has the cause)`));
    recording.onDrain(() => this.releaseOutput("recording"));
    return true;
  }

  /** Ends the session from outside (gateway shutdown): CLOSE with the reason, then end the shell. */
  shutdown(reason: string): Promise<void> {
    return this.end("shutdown", reason);
  }

  private awaitAuthMessage(): Promise<string | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pendingAuth = undefined;
        resolve(null);
      }, this.ctx.config.authTimeoutMs);
      this.pendingAuth = (message) => {
        clearTimeout(timer);
        this.pendingAuth = undefined;
        resolve(message.msgType === RequestType.AUTH ? message.content.toString("utf8").trim() || null : null);
      };
      this.finished.then(() => clearTimeout(timer));
    });
  }

  private onMessage(frame: Buffer, isBinary: boolean): void {
    // The server skips ws's own UTF-8 check (it closes with 1007 and no reason): a text frame is
    // checked here, so the client gets Entry's CLOSE with bad-request like any other bad frame.
    if (!isBinary && !isUtf8(frame)) {
      void this.end("bad-request", "malformed message: a text frame that is not UTF-8");
      return;
    }
    let message: Request;
    try {
      message = decodeRequest(frame);
    } catch {
      void this.end("bad-request", "malformed message: expected an Entry RequestMessage (protobuf)");
      return;
    }
    if (this.pendingAuth) return this.pendingAuth(message);
    switch (message.msgType) {
      case RequestType.PLAIN: {
        if (message.content.length === 0 || this.stdinEnded) return;
        this.lastActivity = Date.now();
        this.bytesIn += message.content.length;
        this.ctx.metrics.bytesIn.inc(message.content.length);
        // On a terminal, the terminal's cursor reports in a form busybox's line editor reads (cursor-report.ts); pipe mode is bytes.
        const input = this.request.tty ? padCursorReports(message.content) : message.content;
        if (this.ready) this.writeInput(input);
        else if (!this.request.tty || this.earlyInputBytes + input.length <= MAX_EARLY_INPUT) {
          this.earlyInput.push(input);
          this.earlyInputBytes += input.length;
          this.updateInputFlow();
        }
        return;
      }
      case RequestType.EOF:
        // A TTY has no end of input but ^D, which the client types itself; Entry's server ignores this type too.
        if (this.request.tty || this.stdinEnded) return;
        this.lastActivity = Date.now();
        this.stdinEnded = true;
        if (this.ready) this.exec!.closeStdin();
        return;
      case RequestType.WINCH: {
        if (!this.request.tty) return;
        const size = parseWinch(message.content);
        if (!size) return; // documented: unusable sizes are ignored
        this.lastActivity = Date.now();
        this.size = size;
        // Before the shell runs, the size is only kept: becomeReady applies the latest.
        if (this.ready || this.readying) void this.applySize();
        return;
      }
      default:
        return; // AUTH after authentication and unknown types are ignored (newer clients)
    }
  }

  private onOutput(chunk: Buffer, stream: OutputStream): void {
    this.lastActivity = Date.now();
    if (stream === "stderr") this.sendOutput(chunk, ResponseType.STDERR);
    else {
      // The wrapper's PID marker comes first on stdout, with or without a TTY. Pipe mode is binary: no UTF-8 carry.
      const data = this.pid.push(chunk);
      this.sendOutput(this.request.tty ? this.utf8.push(data) : data);
    }
    if (this.pid.settled) {
      this.pidSettledNow();
      this.wrapperStarted?.();
      this.wrapperStarted = undefined;
    }
    this.becomeReady();
  }

  private writeInput(data: Buffer): void {
    this.inputInFlight += data.length;
    this.exec!.write(data, () => {
      this.inputInFlight -= data.length;
      this.updateInputFlow();
    });
    this.updateInputFlow();
  }

  /** Input backpressure: stop reading the client while the backend, or the queue before it is ready, holds more than the buffer window. */
  private updateInputFlow(): void {
    const { bufferHighBytes, bufferLowBytes } = this.ctx.config;
    const held = this.inputInFlight + this.earlyInputBytes;
    if (!this.inputPaused && held > bufferHighBytes) {
      this.inputPaused = true;
      this.ws.pause();
    } else if (this.inputPaused && held <= bufferLowBytes) {
      this.inputPaused = false;
      this.peerAlive = true; // its pong may still wait in the socket: judge it from the next ping on
      this.ws.resume();
    }
  }

  /**
   * The wrapper's PID marker proves the process runs. Only then is the size applied (a resize sent
   * earlier can be lost: podman ignores it), then, on a terminal, the wrapper told to start the
   * command (START_SIGNAL, shell.ts: the command must not start before the runtime has set the
   * terminal's modes), and then the input typed so far written, so that a command typed right after
   * connecting (or piped in) already sees the client's terminal size. The signal waits for the
   * resize's answer although that costs the first prompt a round trip: podman answers the resize
   * before conmon applies it (conmon reads sizes from its control FIFO, containers/conmon
   * src/ctrl.c), and a shell started at once ran `stty size` at 24x80 under load (docker.test.ts,
   * "resize is seen by stty size").
   */
  private becomeReady(): void {
    const exec = this.exec;
    if (this.ready || this.readying || !exec || !this.pid.settled) return;
    this.readying = true;
    const resized = this.request.tty ? this.ctx.metrics.setupSeconds.startTimer({ step: "resize" }) : undefined;
    void (resized ? this.applySize().then(() => void resized()) : Promise.resolve()).then(() => {
      if (this.closing) return;
      this.ready = true;
      // Only our wrapper waits for the signal: without its marker (ruled out, not found) the
      // signal would be an end of input for whatever runs there instead.
      if (this.request.tty && this.pid.shell) exec.write(START_SIGNAL);
      const early = this.earlyInput;
      this.earlyInput = [];
      this.earlyInputBytes = 0;
      for (const chunk of early) this.writeInput(chunk);
      if (this.stdinEnded) exec.closeStdin();
      this.updateInputFlow();
    });
  }

  /**
   * Applies this.size to the exec; resolves once the latest size asked for is applied. At most one
   * resize is in flight per session: sizes that arrive meanwhile collapse into the newest, so a storm
   * of WINCH messages (a window dragged, or a hostile client) costs a few engine calls, not one each
   * (with the Docker backend every resize is an HTTP request, each on its own connection while the
   * others wait).
   */
  private applySize(): Promise<void> {
    this.sizeWanted = true;
    // The first resize is sent at once (the Kubernetes backend orders it before any later input); the
    // loop then runs past its first await, so it cannot end and clear this.sizing before it is set.
    if (!this.sizing && this.exec && !this.closing) this.sizing = this.resizeUntilCurrent();
    return this.sizing ?? Promise.resolve();
  }

  private async resizeUntilCurrent(): Promise<void> {
    while (this.sizeWanted && this.exec && !this.closing) {
      this.sizeWanted = false;
      const { cols, rows } = this.size;
      await this.exec.resize(cols, rows);
      // The recording gets the sizes the shell got, each change once.
      if (this.recording && (cols !== this.recordedSize.cols || rows !== this.recordedSize.rows)) {
        this.recording.resize(cols, rows);
        this.recordedSize = { cols, rows };
      }
    }
    this.sizing = undefined;
  }

  /** Output for the client: `data` is only valid during the call (output.ts copies it). */
  private sendOutput(data: Buffer, msgType: number = ResponseType.STDOUT): void {
    if (data.length === 0) return;
    this.bytesOut += data.length;
    this.ctx.metrics.bytesOut.inc(data.length);
    if (this.recording && !this.recording.output(data)) this.holdOutput("recording");
    this.output.push(data, msgType);
  }

  /** Sends a message that is not output (PING, CLOSE). */
  private send(msgType: number, content: Buffer, extra: { exitCode?: number; closeCode?: string } = {}): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(extra.closeCode === undefined && extra.exitCode === undefined ? encodeOutput(msgType, content) : encodeResponse({ msgType, content, ...extra }));
  }

  /** Output backpressure: the shell's output is paused while anything holds it. */
  private holdOutput(reason: "client" | "recording"): void {
    if (this.outputHolds.has(reason)) return;
    if (this.outputHolds.size === 0) this.exec?.pause();
    this.outputHolds.add(reason);
  }

  private releaseOutput(reason: "client" | "recording"): void {
    if (!this.outputHolds.delete(reason)) return;
    if (this.outputHolds.size === 0) this.exec?.resume();
  }

  private startTimers(): void {
    const { pingIntervalMs, wsPingIntervalMs, idleTimeoutMs, maxSessionSeconds, reauthorizeIntervalMs } = this.ctx.config;
    // An absolute end: the token's expiry, or maxSessionSeconds after the start, whichever comes first.
    const limits = [this.expiresAt, maxSessionSeconds > 0 ? this.startedAt.getTime() + maxSessionSeconds * 1000 : undefined].filter((t): t is number => t !== undefined);
    if (limits.length > 0) {
      const deadline = Math.min(...limits);
      const why = deadline === this.expiresAt ? "the access token expired" : `the session reached its limit of ${maxSessionSeconds} s`;
      // setTimeout takes at most 2^31-1 ms; a later deadline is checked again when that fires.
      const arm = (): void => {
        const left = deadline - Date.now();
        if (left <= 0) return void this.end("expired", why);
        this.timers.push(setTimeout(arm, Math.min(left, 2 ** 31 - 1)));
      };
      arm();
    }
    if (this.recheck && reauthorizeIntervalMs > 0) this.timers.push(setInterval(() => void this.reauthorize(), reauthorizeIntervalMs));
    if (pingIntervalMs > 0) this.timers.push(setInterval(() => this.send(ResponseType.PING, Buffer.alloc(0)), pingIntervalMs));
    if (wsPingIntervalMs > 0) {
      this.timers.push(
        setInterval(() => {
          // While input backpressure pauses the socket, its pongs are not read either: no verdict then.
          if (this.inputPaused) return;
          if (!this.peerAlive) {
            this.ws.terminate(); // dead peer: no pong since the last ping
            return;
          }
          this.peerAlive = false;
          this.ws.ping();
        }, wsPingIntervalMs),
      );
    }
    if (idleTimeoutMs > 0) {
      const check = Math.max(50, Math.min(idleTimeoutMs / 4, 5000));
      this.timers.push(
        setInterval(() => {
          if (Date.now() - this.lastActivity >= idleTimeoutMs) void this.end("idle-timeout", `idle for ${Math.round(idleTimeoutMs / 1000)} s`);
        }, check),
      );
    }
  }

  /**
   * Asks the authorizer whether the grant still holds; ends the session when it no longer does. An
   * authorizer that cannot answer leaves the session running until the next time (logged): a
   * webhook's bad minute must not end every session. One question at a time.
   */
  private async reauthorize(): Promise<void> {
    if (this.rechecking || this.closing || !this.recheck) return;
    this.rechecking = true;
    try {
      const answer = await this.recheck();
      if (this.closing) return;
      if (answer.outcome === "revoked") {
        this.ctx.metrics.denials.inc({ reason: "revoked" });
        await this.end(answer.closeCode, answer.reason);
      } else if (answer.outcome === "unavailable") {
        this.ctx.logger.log("warn", "could not authorize the session again; it goes on until the next check", { session: this.id, target: this.label, error: answer.detail });
      }
    } finally {
      this.rechecking = false;
    }
  }

  private async onExecEnd(exitCode: number | null, error?: string): Promise<void> {
    this.sendOutput(this.utf8.push(this.pid.flush()));
    this.sendOutput(this.utf8.flush());
    this.output.flush();
    if (exitCode === null) {
      // The stream ended without an exit status: the connection to the container was lost (an API
      // server restart, a dropped engine connection) and the shell may still run. end() reaps it.
      // The backend's words stay in the log, as for a failed setup: the API server's name the
      // node's kubelet address and the exec request's URL (the wrapper command). Only a missing
      // executable (a target image with no shell) is named to the client, who can act on it.
      this.ctx.metrics.backendErrors.inc({ operation: "stream" });
      this.ctx.logger.log("error", "lost the connection to the shell", { session: this.id, target: this.label, ...(error ? { error } : {}) });
      if (error && MISSING_EXECUTABLE.test(error)) {
        return this.end("backend-error", "the shell could not start in the target: no such file or directory (an image without a shell: a debug container can help where this gateway allows them)");
      }
      return this.end("backend-error", `lost the connection to the shell (session ${this.id}; the gateway's log has the cause)`);
    }
    this.execEnded = true;
    await this.end("exit", `shell exited with code ${exitCode}`, exitCode);
  }

  /** The exec is open but nobody will use it again: drop the stream and end the shell behind it. */
  private async abandonExec(): Promise<void> {
    const exec = this.exec;
    if (!exec || this.execEnded) return;
    this.execEnded = true;
    // A client can leave before the wrapper reported the PID: keep reading a little longer for it.
    if (!this.pid.settled) await Promise.race([this.pidSettled, new Promise((resolve) => setTimeout(resolve, PID_WAIT_MS))]);
    exec.close();
    const shell = this.pid.shell;
    if (shell === null || !shell.startTime || !this.resolved) {
      // Without the start time the PID may name another process by now: better a lingering shell than a wrong kill.
      this.ctx.logger.log("warn", "shell PID or start time unknown: cannot end the abandoned shell", { session: this.id, target: this.label });
      return;
    }
    const pid = shell.pid;
    const { reapGraceSeconds, reapTimeoutMs } = this.ctx.config;
    // The container's user controls what the reaper runs on (/bin/sh, kill, /proc): it may never
    // end. Past its deadline it is dropped and recorded; the session's slots were given back already.
    const deadline = AbortSignal.timeout(reapTimeoutMs);
    const failed = (result: "failed" | "timeout", reason: string) => {
      this.ctx.metrics.reaped.inc({ result });
      this.ctx.audit.write({ event: "reap.failed", session: this.id, ...(this.user ? { user: this.user } : {}), container: this.resolved!.label, pid, reason });
    };
    try {
      const code = await this.ctx.backend.run(this.resolved, reapCommand(shell, reapGraceSeconds), { signal: deadline });
      const result = ReapResult[code as keyof typeof ReapResult];
      if (result === undefined) return failed("failed", `the reaper exited with ${code === null ? "no exit code" : `code ${code}`}`);
      this.ctx.metrics.reaped.inc({ result });
      this.ctx.logger.log("info", "ended abandoned shell", { session: this.id, target: this.resolved.label, pid, result });
    } catch (error) {
      if (deadline.aborted) {
        this.ctx.logger.log("error", "gave up ending an abandoned shell", { session: this.id, pid, timeoutMs: reapTimeoutMs });
        return failed("timeout", `the reaper did not end within ${reapTimeoutMs} ms`);
      }
      this.ctx.metrics.backendErrors.inc({ operation: "reap" });
      this.ctx.logger.log("error", "could not end abandoned shell", { session: this.id, pid, error: errorMessage(error) });
      failed("failed", "the reaper could not run (the gateway's log has the cause)");
    }
  }

  private async end(closeCode: CloseCode, reason: string, exitCode: number | null = null): Promise<void> {
    if (this.closing) return this.finished;
    this.closing = true;
    this.closeCode = closeCode;
    this.ended.abort();
    for (const timer of this.timers) clearInterval(timer);
    this.settleAuth();
    if (this.pendingAuth) this.pendingAuth({ msgType: -1, content: Buffer.alloc(0) });
    const extra = exitCode === null ? { closeCode } : { closeCode, exitCode };
    this.output.flush(); // output held for a frame in flight goes before CLOSE
    this.send(ResponseType.CLOSE, Buffer.from(reason), extra);
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    const started = this.exec !== undefined;
    // The slots first: ending the shell can take long (or never end), and must not hold them.
    if (this.admitted && this.user) this.ctx.limits.release(this.user);
    await this.abandonExec();
    if (started) this.ctx.metrics.active.dec();
    this.ctx.metrics.sessions.inc({ outcome: closeCode });
    // The audit record first: it never waits for the storage (a hung bucket cannot hold it back).
    this.audit(started ? "session.end" : "session.refused", { closeCode, reason, exitCode });
    try {
      await this.recording?.finish(closeCode);
    } catch (error) {
      // A session ended by its recording's failure says so in its close code; any other gets a record of its own.
      if (closeCode !== "recording-failed") this.audit("recording.failed", { reason: `the recording could not be stored to its end: ${errorMessage(error)}` });
    }
    this.resolveFinished();
  }

  private audit(event: AuditEvent["event"], end?: { closeCode?: CloseCode; reason: string; exitCode?: number | null }): void {
    const record: AuditEvent = {
      event,
      session: this.id,
      ...(this.user ? { user: this.user } : {}),
      target: this.label,
      ...(this.request.command.length > 0 ? { command: this.request.command } : {}),
      ...(this.resolved ? { container: this.resolved.label } : {}),
      ...(this.recording ? { recording: this.recording.id } : {}),
      client: this.request.clientAddress,
      startedAt: this.startedAt.toISOString(),
    };
    if (event === "recording.failed") record.reason = end!.reason;
    else if (end) {
      const endedAt = new Date();
      Object.assign(record, {
        endedAt: endedAt.toISOString(),
        durationMs: endedAt.getTime() - this.startedAt.getTime(),
        exitCode: end.exitCode,
        bytesIn: this.bytesIn,
        bytesOut: this.bytesOut,
        closeCode: end.closeCode,
        reason: end.reason,
      });
    }
    this.ctx.audit.write(record);
  }
}
