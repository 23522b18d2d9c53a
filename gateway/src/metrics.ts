// Prometheus metrics, in a registry per gateway so several gateways can live in one process (tests).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { stdoutLines } from "./log.js";

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "entryway_" });
  const bytes = new Counter({
    name: "entryway_bytes_total",
    help: "Payload bytes: in = client to shell, out = shell to client.",
    labelNames: ["direction"],
    registers: [registry],
  });
  return {
    registry,
    sessions: new Counter({
      name: "entryway_sessions_total",
      help: "Sessions by outcome (the close code).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    active: new Gauge({ name: "entryway_sessions_active", help: "Open sessions.", registers: [registry] }),
    bytes,
    // Counted for every chunk of output: the labelled child once, not a label lookup per chunk.
    bytesIn: bytes.labels({ direction: "in" }),
    bytesOut: bytes.labels({ direction: "out" }),
    denials: new Counter({
      name: "entryway_auth_denials_total",
      help: "Refused sessions by reason code.",
      labelNames: ["reason"],
      registers: [registry],
    }),
    backendErrors: new Counter({
      name: "entryway_backend_errors_total",
      help: "Backend failures by operation.",
      labelNames: ["operation"],
      registers: [registry],
    }),
    reaped: new Counter({
      name: "entryway_shells_reaped_total",
      help: "Abandoned shells the gateway tried to end: hangup, killed or gone, or failed and timeout when the reaper did not succeed (audit reap.failed).",
      labelNames: ["result"],
      registers: [registry],
    }),
    stdoutDropped: new Counter({
      name: "entryway_stdout_lines_dropped_total",
      help: "Log and audit lines stdout could not take: its reader was gone (EPIPE) or had not read the last 8 MiB.",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(stdoutLines().dropped());
      },
    }),
    recordingFailures: new Counter({
      name: "entryway_recording_failures_total",
      help: "Recording writes that failed or timed out, by sink and stage: start (the session was refused), session (it was ended), end (its last write).",
      labelNames: ["sink", "stage"],
      registers: [registry],
    }),
    recordingWriteSeconds: new Histogram({
      name: "entryway_recording_write_seconds",
      help: "Time one recording write to the bucket took: checkpoint (the object or its tail), part (a multipart part), final (the last part or object, and completing the upload).",
      labelNames: ["sink", "kind"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    recordingsRecovered: new Counter({
      name: "entryway_recordings_recovered_total",
      help: "Multipart recordings of a stopped gateway that this replica completed from their last checkpoint.",
      registers: [registry],
    }),
    setupSeconds: new Histogram({
      name: "entryway_session_setup_seconds",
      help: "Time each step of opening a session took: authorize, resolve (the target), record (storing the recording's header), exec (create and start it), wrapper (until the shell reported its PID), resize (to the client's size, before input flows).",
      labelNames: ["step"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
