// One client connection, from the upgrade to its end, in phases as client-go's remotecommand and
// gotty layer theirs: admission (admission.ts: token, authorizer, limits), opening (opening.ts:
// target, debug container, recording, exec), then the pump (pump.ts: the bytes both ways) under the
// watch (watch.ts: deadline, reauthorization, pings, idleness) until the shell exits or something
// ends the session. The session owns the lifetime: one AbortController, whose signal every phase is
// given and end() aborts; end() is the one way a session ends (CLOSE with its code, the slot given
// back, an abandoned shell reaped (reap.ts), the audit record written, the recording finished).
import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { AuditEvent } from "../audit.js";
import { DebugContainerError, DeniedError, NotFoundError, type ExecHandlers } from "../backends/backend.js";
import { errorMessage } from "../log.js";
import {
  decodeRequest,
  encodeOutput,
  encodeResponse,
  ResponseType,
  type CloseCode,
  type Request,
} from "../protocol.js";
import { describeTarget } from "../target.js";
import { Admission } from "./admission.js";
import { Refusal, SessionEnded, type SessionContext, type SessionRequest } from "./context.js";
import { Opening } from "./opening.js";
import { Pump } from "./pump.js";
import { abandonShell } from "./reap.js";
import { watch } from "./watch.js";

export type { SessionContext, SessionRequest } from "./context.js";

/** How runtimes say that the command to exec does not exist (runc: "exec: \"/bin/sh\": stat /bin/sh: no such file or directory"). */
const MISSING_EXECUTABLE = /no such file or directory|executable file not found/i;

export class Session {
  readonly id = randomUUID();
  /** Resolves when the session is over, including ending an abandoned shell. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  /** Resolves once the authorizer decided, or the session ended before it could. */
  readonly authSettled: Promise<void>;
  /** Aborted by end(), with SessionEnded as the reason: every phase still at work stops. */
  private readonly ended = new AbortController();
  private readonly startedAt = new Date();
  private readonly admission: Admission;
  private readonly opening: Opening;
  private readonly pump: Pump;
  /** Stops the watch's timers, once it runs. */
  private stopWatch: (() => void) | undefined;
  /** The exec's stream ended, or was abandoned: nothing more to end. */
  private execEnded = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly request: SessionRequest,
    private readonly ctx: SessionContext,
  ) {
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    const { signal } = this.ended;
    const pump = (this.pump = new Pump(ws, request.tty, ctx, signal));
    this.admission = new Admission(ctx, request, this, signal);
    this.authSettled = this.admission.settled;
    const handlers: ExecHandlers = {
      onOutput: (chunk, stream) => pump.onOutput(chunk, stream),
      onEnd: (result) => void this.onExecEnd(result.exitCode, result.error),
    };
    this.opening = new Opening(
      ctx,
      request,
      {
        id: this.id,
        label: this.label,
        pump,
        handlers,
        recordingFailed: () =>
          void this.end(
            "recording-failed",
            `the session's recording could not be written, so the session is ended (session ${this.id}; the gateway's log has the cause)`,
          ),
      },
      signal,
    );
    ws.on("message", (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on("pong", () => (pump.peerAlive = true));
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
    const { signal } = this.ended;
    try {
      const grant = await this.admission.admit();
      await this.opening.open(grant);
      this.ctx.metrics.active.inc();
      this.audit("session.start");
      const session = {
        id: this.id,
        label: this.label,
        ws: this.ws,
        pump: this.pump,
        startedAt: this.startedAt,
        ping: () => this.send(ResponseType.PING, Buffer.alloc(0)),
        end: (closeCode: CloseCode, reason: string) => this.end(closeCode, reason),
      };
      this.stopWatch = watch(this.ctx, session, grant, signal);
      // Authorized and open: a PING says so before any output, for the client's connect deadline
      // (the upgrade's entryway-version header promises it; clients that do not know PING skip it).
      session.ping();
      this.pump.start();
    } catch (error) {
      // The session ended meanwhile: an exec created since is one nobody will use, whose shell is ended.
      if (error instanceof SessionEnded) return void (await this.abandonExec());
      if (error instanceof Refusal) return void (await this.end(error.closeCode, error.message));
      if (error instanceof NotFoundError) return void (await this.end("not-found", error.message));
      if (error instanceof DeniedError) return void (await this.end("denied", error.message));
      if (error instanceof DebugContainerError) {
        this.ctx.metrics.backendErrors.inc({ operation: "debug" });
        return void (await this.end("backend-error", error.message));
      }
      this.ctx.metrics.backendErrors.inc({
        operation: this.opening.exec ? "stream" : this.opening.resolved ? "exec" : "resolve",
      });
      // The backend's text (client-node errors carry API response bodies) goes to the log only.
      this.ctx.logger.log("error", "session setup failed", {
        session: this.id,
        target: this.label,
        error: errorMessage(error),
      });
      await this.end(
        "backend-error",
        `could not start the shell (session ${this.id}; the gateway's log has the cause)`,
      );
    }
  }

  /** Ends the session from outside (gateway shutdown): CLOSE with the reason, then end the shell. */
  shutdown(reason: string): Promise<void> {
    return this.end("shutdown", reason);
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
    if (!this.admission.offer(message)) this.pump.onRequest(message);
  }

  /** Sends a message that is not output (PING, CLOSE). */
  private send(msgType: number, content: Buffer, extra: { exitCode?: number; closeCode?: string } = {}): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(
      extra.closeCode === undefined && extra.exitCode === undefined
        ? encodeOutput(msgType, content)
        : encodeResponse({ msgType, content, ...extra }),
    );
  }

  private async onExecEnd(exitCode: number | null, error?: string): Promise<void> {
    this.pump.finishOutput();
    if (exitCode === null) {
      // The stream ended without an exit status: the connection to the container was lost (an API
      // server restart, a dropped engine connection) and the shell may still run. end() reaps it.
      // The backend's words stay in the log, as for a failed setup: the API server's name the
      // node's kubelet address and the exec request's URL (the wrapper command). Only a missing
      // executable (a target image with no shell) is named to the client, who can act on it.
      this.ctx.metrics.backendErrors.inc({ operation: "stream" });
      this.ctx.logger.log("error", "lost the connection to the shell", {
        session: this.id,
        target: this.label,
        ...(error ? { error } : {}),
      });
      if (error && MISSING_EXECUTABLE.test(error)) {
        return this.end(
          "backend-error",
          "the shell could not start in the target: no such file or directory (an image without a shell: a debug container can help where this gateway allows them)",
        );
      }
      return this.end(
        "backend-error",
        `lost the connection to the shell (session ${this.id}; the gateway's log has the cause)`,
      );
    }
    this.execEnded = true;
    await this.end("exit", `shell exited with code ${exitCode}`, exitCode);
  }

  /** The exec is open but nobody will use it again: drop the stream and end the shell behind it. */
  private async abandonExec(): Promise<void> {
    const exec = this.opening.exec;
    if (!exec || this.execEnded) return;
    this.execEnded = true;
    await abandonShell(
      this.ctx,
      { id: this.id, label: this.label, user: this.admission.user },
      exec,
      this.pump,
      this.opening.resolved,
    );
  }

  private async end(closeCode: CloseCode, reason: string, exitCode: number | null = null): Promise<void> {
    if (this.ended.signal.aborted) return this.finished;
    // The phases stop: a step still at work throws the signal's reason after its await (admission,
    // opening), a debug container's start is no longer waited for, the pump writes nothing more. What
    // waits for no await is stopped here (AbortSignal listeners cost a session more memory): the
    // watch's timers, and admission's wait for an AUTH message and its decision (authSettled).
    this.ended.abort(new SessionEnded(closeCode));
    this.stopWatch?.();
    this.admission.end();
    const extra = exitCode === null ? { closeCode } : { closeCode, exitCode };
    this.pump.flushOutput(); // output held for a frame in flight goes before CLOSE
    this.send(ResponseType.CLOSE, Buffer.from(reason), extra);
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    const started = this.opening.exec !== undefined;
    // The slot first: ending the shell can take long (or never end), and must not hold it.
    this.admission.release();
    await this.abandonExec();
    if (started) this.ctx.metrics.active.dec();
    this.ctx.metrics.sessions.inc({ outcome: closeCode });
    // The audit record first: it never waits for the storage (a hung bucket cannot hold it back).
    this.audit(started ? "session.end" : "session.refused", { closeCode, reason, exitCode });
    try {
      await this.opening.recording?.finish(closeCode);
    } catch (error) {
      // A session ended by its recording's failure says so in its close code; any other gets a record of its own.
      if (closeCode !== "recording-failed")
        this.audit("recording.failed", {
          reason: `the recording could not be stored to its end: ${errorMessage(error)}`,
        });
    }
    this.resolveFinished();
  }

  private audit(
    event: AuditEvent["event"],
    end?: { closeCode?: CloseCode; reason: string; exitCode?: number | null },
  ): void {
    const { user } = this.admission;
    const { resolved, recording } = this.opening;
    const record: AuditEvent = {
      event,
      session: this.id,
      ...(user ? { user } : {}),
      target: this.label,
      ...(this.request.command.length > 0 ? { command: this.request.command } : {}),
      ...(resolved ? { container: resolved.label } : {}),
      ...(recording ? { recording: recording.id } : {}),
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
        bytesIn: this.pump.bytesIn,
        bytesOut: this.pump.bytesOut,
        closeCode: end.closeCode,
        reason: end.reason,
      });
    }
    this.ctx.audit.write(record);
  }
}
