// Structured JSON logs, one object per line. Callers never pass tokens or other secrets.
export type Level = "debug" | "info" | "warn" | "error";
const rank: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  log(level: Level, msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(minLevel: Level, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  return {
    log(level, msg, fields) {
      if (rank[level] < rank[minLevel]) return;
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n");
    },
  };
}

/**
 * An error's text for the log. Not every rejection is an Error: @kubernetes/client-node's exec
 * rejects with the WebSocket's ErrorEvent (`message`, and the underlying `error`) when the API
 * server refuses the upgrade, e.g. when it cannot reach the node's kubelet; String() of that is
 * "[object Object]", which loses the cause.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const { message, error: inner } = error as { message?: unknown; error?: unknown };
    const parts = [typeof message === "string" ? message : undefined, inner instanceof Error && inner.message !== message ? inner.message : undefined].filter(Boolean);
    if (parts.length > 0) return parts.join(": ");
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}
