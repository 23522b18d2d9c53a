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

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
