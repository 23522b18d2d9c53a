// Ending an abandoned shell: the client is gone but the exec is open. Dropping the stream does not
// end the process in the container, so the reaper (shell.ts) ends it by its PID and start time.
import type { ExecControl, ResolvedTarget } from "../backends/backend.js";
import { errorMessage } from "../log.js";
import { reapCommand, ReapResult } from "../shell.js";
import type { SessionContext, SessionRef } from "./context.js";
import type { Pump } from "./pump.js";

/** How long an abandoned exec is kept open for its PID report. */
const PID_WAIT_MS = 5000;

/** Drops the exec's stream and ends the shell behind it; logs and audits what it could not do. */
export async function abandonShell(
  ctx: SessionContext,
  session: SessionRef & { user: string | undefined },
  exec: ExecControl,
  pump: Pick<Pump, "pid" | "pidSettled">,
  target: ResolvedTarget | undefined,
): Promise<void> {
  // A client can leave before the wrapper reported the PID: keep reading a little longer for it.
  if (!pump.pid.settled)
    await Promise.race([pump.pidSettled, new Promise((resolve) => setTimeout(resolve, PID_WAIT_MS))]);
  exec.close();
  const shell = pump.pid.shell;
  if (shell === null || !shell.startTime || !target) {
    // Without the start time the PID may name another process by now: better a lingering shell than a wrong kill.
    ctx.logger.log("warn", "shell PID or start time unknown: cannot end the abandoned shell", {
      session: session.id,
      target: session.label,
    });
    return;
  }
  const pid = shell.pid;
  const { reapGraceSeconds, reapTimeoutMs } = ctx.config;
  // The container's user controls what the reaper runs on (/bin/sh, kill, /proc): it may never
  // end. Past its deadline it is dropped and recorded; the session's slots were given back already.
  const deadline = AbortSignal.timeout(reapTimeoutMs);
  const failed = (result: "failed" | "timeout", reason: string) => {
    ctx.metrics.reaped.inc({ result });
    ctx.audit.write({
      event: "reap.failed",
      session: session.id,
      ...(session.user ? { user: session.user } : {}),
      container: target.label,
      pid,
      reason,
    });
  };
  try {
    const code = await ctx.backend.run(target, reapCommand(shell, reapGraceSeconds), { signal: deadline });
    const result = ReapResult[code as keyof typeof ReapResult];
    if (result === undefined)
      return failed("failed", `the reaper exited with ${code === null ? "no exit code" : `code ${code}`}`);
    ctx.metrics.reaped.inc({ result });
    ctx.logger.log("info", "ended abandoned shell", { session: session.id, target: target.label, pid, result });
  } catch (error) {
    if (deadline.aborted) {
      ctx.logger.log("error", "gave up ending an abandoned shell", {
        session: session.id,
        pid,
        timeoutMs: reapTimeoutMs,
      });
      return failed("timeout", `the reaper did not end within ${reapTimeoutMs} ms`);
    }
    ctx.metrics.backendErrors.inc({ operation: "reap" });
    ctx.logger.log("error", "could not end abandoned shell", { session: session.id, pid, error: errorMessage(error) });
    failed("failed", "the reaper could not run (the gateway's log has the cause)");
  }
}
