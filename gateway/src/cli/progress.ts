// The progress meter of `entryway cp` on a terminal: bytes so far (of the total when it is known
// ahead, i.e. an upload), the rate, and the time left; redrawn in place on stderr a few times a
// second, then one summary line. Only when stderr is a terminal and without --quiet.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1536 → "1.5 KiB"; bytes below 1 KiB as a whole number. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** 65 → "1:05", 3725 → "1:02:05". */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return `${h > 0 ? `${h}:` : ""}${mm}:${String(s).padStart(2, "0")}`;
}

/** One line of the meter: "sent 45.2 MiB of 100.0 MiB (45%)  22.6 MiB/s  ETA 0:03". */
export function progressLine(verb: string, bytes: number, elapsedMs: number, total?: number): string {
  const rate = elapsedMs > 0 ? bytes / (elapsedMs / 1000) : 0;
  const parts = [
    total !== undefined && total > 0
      ? `${verb} ${formatBytes(bytes)} of ${formatBytes(total)} (${Math.min(100, Math.floor((bytes / total) * 100))}%)`
      : `${verb} ${formatBytes(bytes)}`,
    `${formatBytes(rate)}/s`,
  ];
  if (total !== undefined && rate > 0 && bytes < total) parts.push(`ETA ${formatDuration((total - bytes) / rate)}`);
  return parts.join("  ");
}

/** The summary: "received 100.0 MiB in 3.7 s (27.0 MiB/s)". */
export function summaryLine(verb: string, bytes: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? bytes / (elapsedMs / 1000) : 0;
  return `${verb} ${formatBytes(bytes)} in ${(elapsedMs / 1000).toFixed(1)} s (${formatBytes(rate)}/s)`;
}

export interface Meter {
  add(bytes: number): void;
  /** Draws the summary (done) or clears the line (failed), and stops. */
  end(done: boolean): void;
}

const QUIET: Meter = { add: () => {}, end: () => {} };

/** A meter on `stream` when it is a terminal and not `quiet`; else one that draws nothing. */
export function progressMeter(
  stream: NodeJS.WriteStream,
  verb: string,
  options: { quiet?: boolean; total?: number; intervalMs?: number } = {},
): Meter {
  if (options.quiet || !stream.isTTY) return QUIET;
  const started = performance.now();
  let bytes = 0;
  const draw = () => stream.write(`\r${progressLine(verb, bytes, performance.now() - started, options.total)}\x1b[K`);
  const timer = setInterval(draw, options.intervalMs ?? 250);
  timer.unref();
  draw();
  return {
    add: (n) => void (bytes += n),
    end(done) {
      clearInterval(timer);
      stream.write(done ? `\r${summaryLine(verb, bytes, performance.now() - started)}\x1b[K\n` : "\r\x1b[K");
    },
  };
}
