// The pump: a session's bytes both ways between the client's WebSocket and the exec. It exists from
// the session's start, because a client may type (and resize) before the shell runs: that input
// waits (early input) until the shell is ready (becomeReady). Either side that falls behind stops
// the other (backpressure: the client's socket is paused for input, the exec for output). On a TTY
// a UTF-8 character split across the exec's chunks is carried to the next frame; the wrapper's PID
// marker is taken out of stdout (shell.ts). The hot path is onRequest(PLAIN) and onOutput.
import type { WebSocket } from "ws";
import type { ExecControl, OutputStream } from "../backends/backend.js";
import type { GatewayConfig } from "../config.js";
import { padCursorReports } from "../cursor-report.js";
import type { Metrics } from "../metrics.js";
import { OutputFramer } from "../output.js";
import { parseWinch, RequestType, ResponseType, type Request } from "../protocol.js";
import type { Recording } from "../recordings/sink.js";
import { PidMarkerFilter, START_SIGNAL } from "../shell.js";
import { Utf8Carry } from "../utf8.js";
import type { SessionContext, Size } from "./context.js";

const DEFAULT_SIZE = { cols: 80, rows: 24 };
/** Input that arrives before the shell is ready is kept: on a TTY up to this much; pipe mode keeps all, under input backpressure. */
const MAX_EARLY_INPUT = 64 * 1024;

export class Pump {
  /** The terminal size the client asked for last (replaced, never changed in place: the exec may hold the old one). */
  size: Size = { ...DEFAULT_SIZE };
  /** Whether the client answered the last WebSocket ping (watch.ts). */
  peerAlive = true;
  /** Input and output bytes, for the audit record. */
  bytesIn = 0;
  bytesOut = 0;
  /** When input or output last moved (Date.now()), for the idle timeout. */
  lastActivity = Date.now();
  /** The wrapper's PID report, taken from the start of stdout. */
  readonly pid = new PidMarkerFilter();
  /** Resolves once the PID report is complete (or ruled out). */
  readonly pidSettled: Promise<void>;
  private pidSettledNow!: () => void;

  private exec: ExecControl | undefined;
  /** Input waits until the shell runs at the client's size (see becomeReady). */
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
  /** Why the shell's output is paused: the client's socket is behind, or the recording holds too much. */
  private readonly outputHolds = new Set<"client" | "recording">();
  /** Output frames on their way to the client (output.ts). */
  private readonly output: OutputFramer;
  private readonly utf8 = new Utf8Carry();
  private recording: Recording | undefined;
  private recordedSize = { ...DEFAULT_SIZE };
  /** Ends the "wrapper" setup step: from the exec's start until the shell reported its PID. */
  private wrapperStarted: (() => void) | undefined;
  private readonly tty: boolean;
  private readonly config: GatewayConfig;
  private readonly metrics: Metrics;

  constructor(
    private readonly ws: WebSocket,
    tty: boolean,
    ctx: SessionContext,
    /** The session's: once it aborts, nothing more is written to the exec. */
    private readonly signal: AbortSignal,
  ) {
    this.tty = tty;
    this.config = ctx.config;
    this.metrics = ctx.metrics;
    this.pidSettled = new Promise<void>((resolve) => (this.pidSettledNow = resolve));
    const { outputFrameBytes, bufferHighBytes, bufferLowBytes } = ctx.config;
    this.output = new OutputFramer((frame, written) => ws.send(frame, written), {
      frameBytes: outputFrameBytes,
      text: tty,
      highBytes: bufferHighBytes,
      lowBytes: bufferLowBytes,
      // Backpressure: a client that reads slowly stops the exec's output, as a terminal stops its program.
      onPause: () => this.holdOutput("client"),
      onResume: () => this.releaseOutput("client"),
    });
  }

  /** Whether input backpressure paused the client's socket (its pongs are not read then either). */
  get readingPaused(): boolean {
    return this.inputPaused;
  }

  /** The exec exists (its output may already have come): the "wrapper" setup step runs until its PID report. */
  attach(exec: ExecControl): void {
    this.exec = exec;
    if (!this.pid.settled) this.wrapperStarted = this.metrics.setupSeconds.startTimer({ step: "wrapper" });
  }

  /** The session runs: the early input goes to the shell as soon as it is ready. */
  start(): void {
    this.becomeReady();
  }

  /** The recording runs: it gets the output, and each size the shell got; while it is behind, the output waits. */
  record(recording: Recording): void {
    this.recording = recording;
    this.recordedSize = { ...this.size };
    recording.onDrain(() => this.releaseOutput("recording"));
  }

  /** A client's message past admission: input, EOF, a size. */
  onRequest(message: Request): void {
    switch (message.msgType) {
      case RequestType.PLAIN: {
        if (message.content.length === 0 || this.stdinEnded) return;
        this.lastActivity = Date.now();
        this.bytesIn += message.content.length;
        this.metrics.bytesIn.inc(message.content.length);
        // On a terminal, the terminal's cursor reports in a form busybox's line editor reads (cursor-report.ts); pipe mode is bytes.
        const input = this.tty ? padCursorReports(message.content) : message.content;
        if (this.ready) this.writeInput(input);
        else if (!this.tty || this.earlyInputBytes + input.length <= MAX_EARLY_INPUT) {
          this.earlyInput.push(input);
          this.earlyInputBytes += input.length;
          this.updateInputFlow();
        }
        return;
      }
      case RequestType.EOF:
        // A TTY has no end of input but ^D, which the client types itself; Entry's server ignores this type too.
        if (this.tty || this.stdinEnded) return;
        this.lastActivity = Date.now();
        this.stdinEnded = true;
        if (this.ready) this.exec!.closeStdin();
        return;
      case RequestType.WINCH: {
        if (!this.tty) return;
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

  /** The exec's output (ExecHandlers.onOutput). */
  onOutput(chunk: Buffer, stream: OutputStream): void {
    this.lastActivity = Date.now();
    if (stream === "stderr") this.sendOutput(chunk, ResponseType.STDERR);
    else {
      // The wrapper's PID marker comes first on stdout, with or without a TTY. Pipe mode is binary: no UTF-8 carry.
      const data = this.pid.push(chunk);
      this.sendOutput(this.tty ? this.utf8.push(data) : data);
    }
    if (this.pid.settled) {
      this.pidSettledNow();
      this.wrapperStarted?.();
      this.wrapperStarted = undefined;
    }
    this.becomeReady();
  }

  /** The exec ended: what the PID filter and the UTF-8 carry still hold goes out, and every frame. */
  finishOutput(): void {
    this.sendOutput(this.utf8.push(this.pid.flush()));
    this.sendOutput(this.utf8.flush());
    this.output.flush();
  }

  /** Sends the output held for a frame in flight (before CLOSE). */
  flushOutput(): void {
    this.output.flush();
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
    const { bufferHighBytes, bufferLowBytes } = this.config;
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
    const resized = this.tty ? this.metrics.setupSeconds.startTimer({ step: "resize" }) : undefined;
    void (resized ? this.applySize().then(() => void resized()) : Promise.resolve()).then(() => {
      if (this.signal.aborted) return;
      this.ready = true;
      // Only our wrapper waits for the signal: without its marker (ruled out, not found) the
      // signal would be an end of input for whatever runs there instead.
      if (this.tty && this.pid.shell) exec.write(START_SIGNAL);
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
    if (!this.sizing && this.exec && !this.signal.aborted) this.sizing = this.resizeUntilCurrent();
    return this.sizing ?? Promise.resolve();
  }

  private async resizeUntilCurrent(): Promise<void> {
    while (this.sizeWanted && this.exec && !this.signal.aborted) {
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
    this.metrics.bytesOut.inc(data.length);
    if (this.recording && !this.recording.output(data)) this.holdOutput("recording");
    this.output.push(data, msgType);
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
}
