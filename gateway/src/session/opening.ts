// Opening, a session's second phase: the target resolved to one container, a debug container
// entered when the client asked for one, the recording started, and the exec created on the wrapper
// (shell.ts). What it opened stays here: the session's end closes it, the audit records name it.
import type { ExecControl, ExecHandlers, ResolvedTarget } from "../backends/backend.js";
import type { DebugRequest } from "../debug.js";
import type { Recording } from "../recordings/sink.js";
import { wrapCommand } from "../shell.js";
import type { Grant } from "./admission.js";
import { endedWith, Refusal, type SessionContext, type SessionRef, type SessionRequest } from "./context.js";
import type { Pump } from "./pump.js";

/** Whether the target can run a shell at all: distroless images cannot (the exec itself fails). */
const SHELL_PROBE = ["/bin/sh", "-c", "exit 0"];

/** The session as the opening needs it. */
export interface OpeningSession extends SessionRef {
  /** The client's terminal size so far, and where the exec and the recording are handed (attach, record). */
  readonly pump: Pump;
  /** Where the exec's output and its end go. */
  readonly handlers: ExecHandlers;
  /** A recording write failed once the recording ran: the session ends. */
  recordingFailed(): void;
}

export class Opening {
  /** The container the session runs in, once resolved (the debug container, once entered). */
  resolved: ResolvedTarget | undefined;
  /** The recording, once its header is stored. */
  recording: Recording | undefined;
  /** The exec, once created. */
  exec: ExecControl | undefined;

  constructor(
    private readonly ctx: SessionContext,
    private readonly request: SessionRequest,
    private readonly session: OpeningSession,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Opens the exec for the granted session, or throws: a Refusal (debug container denied, recording
   * refused), the backend's error, or the signal's reason when the session ended meanwhile (an exec
   * created by then is in this.exec: the session ends the shell it will never use).
   */
  async open(grant: Grant): Promise<ExecControl> {
    const { ctx, request, signal, session } = this;
    const setup = ctx.metrics.setupSeconds;
    const resolved = setup.startTimer({ step: "resolve" });
    this.resolved = await ctx.backend.resolve(request.target);
    resolved();
    signal.throwIfAborted();
    if (request.debug) {
      const debugTarget = await this.enterDebugContainer(this.resolved, request.debug, grant);
      signal.throwIfAborted();
      this.resolved = debugTarget;
    }
    if (ctx.recordings) await this.startRecording(grant.user, this.resolved);
    const { pump } = session;
    const command = wrapCommand(request.command.length > 0 ? request.command : ctx.config.shell, {
      terminal: request.tty ? pump.size : undefined,
    });
    const started = setup.startTimer({ step: "exec" });
    const exec = await ctx.backend.exec(this.resolved, command, pump.size, session.handlers, { tty: request.tty });
    started();
    this.exec = exec;
    pump.attach(exec);
    signal.throwIfAborted(); // the client left while the exec was being created
    return exec;
  }

  /**
   * The debug container to enter instead of `target`, or `target` itself when debug=auto found a
   * shell there. The second authorization comes before anything is created; the audit record as
   * soon as the container exists.
   */
  private async enterDebugContainer(
    target: ResolvedTarget,
    debug: DebugRequest,
    grant: Grant,
  ): Promise<ResolvedTarget> {
    const { ctx, signal, session } = this;
    const containers = ctx.backend.debugContainers;
    if (debug.when === "no-shell" && (await ctx.backend.run(target, SHELL_PROBE, { signal })) === 0) return target;
    const { mayDebug } = grant;
    const access =
      mayDebug && containers
        ? await mayDebug({ namespace: target.namespace!, pod: target.pod! })
        : { allow: false as const, reason: "this gateway's authorizer cannot authorize debug containers" };
    signal.throwIfAborted();
    if (!access.allow) {
      ctx.metrics.denials.inc({ reason: "denied" });
      if (access.detail)
        ctx.logger.log("warn", "authorizer failed", {
          session: session.id,
          target: session.label,
          error: access.detail,
        });
      throw new Refusal("denied", `permission denied: ${access.reason}`);
    }
    const debugTarget = await containers!.create(target, debug.image, ctx.config.maxSessionSeconds);
    ctx.audit.write({
      event: "debug.container",
      session: session.id,
      user: grant.user,
      pod: `${target.namespace}/${target.pod}`,
      targetContainer: target.container,
      container: debugTarget.container,
      image: debug.image,
      client: this.request.clientAddress,
    });
    await containers!.waitUntilRunning(debugTarget, ctx.config.debugStartTimeoutMs, signal);
    return debugTarget;
  }

  /**
   * Starts the recording before the shell exists: the header is stored (awaited), so a sink that
   * is full, refuses writes or cannot be reached refuses the session, and no shell is started that
   * would not be recorded. A write that fails later ends the session (recording-failed).
   */
  private async startRecording(user: string, target: ResolvedTarget): Promise<void> {
    const { ctx, signal, session } = this;
    const stored = ctx.metrics.setupSeconds.startTimer({ step: "record" });
    let recording: Recording;
    try {
      recording = await ctx.recordings!.start({ session: session.id, user, target: target.label }, session.pump.size);
    } catch {
      // The sink logged the cause (it may name the bucket or path): the client gets the policy.
      throw new Refusal(
        "recording-failed",
        `the session's recording cannot be written, so the session is refused (session ${session.id}; the gateway's log has the cause)`,
      );
    }
    stored();
    if (signal.aborted) {
      // The session ended while the header was stored (the client left): store the recording's end too.
      void recording.finish(endedWith(signal)).catch(() => {});
      signal.throwIfAborted();
    }
    this.recording = recording;
    recording.onFailure(() => session.recordingFailed());
    session.pump.record(recording);
  }
}
