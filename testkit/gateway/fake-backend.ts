// An in-memory backend for protocol-level tests (bad input, fuzzing, UTF-8 carry): no container, the
// "shell" echoes stdin, reports its size on "size\n", emits scripted chunks, and exits on "exit <n>\n"
// (or with 0 at the end of its stdin, like cat).
import type { Backend, ExecHandlers } from "../../gateway/src/backends/backend.js";
import { START_SIGNAL } from "../../gateway/src/shell.js";

export interface FakeBackend extends Backend {
  execs: number;
  /** Chunks the next exec emits right after starting (after the PID marker). */
  script: Buffer[];
  reaped: number[];
  /** Delay before the shell's first output (its PID report). */
  startDelayMs: number;
  /** The reaper never ends (until the gateway's deadline aborts it). */
  reaperHangs: boolean;
  /** The running containers list() names. */
  containers: string[];
}

export function fakeBackend(): FakeBackend {
  let nextPid = 100;
  const backend: FakeBackend = {
    name: "docker",
    execs: 0,
    script: [],
    reaped: [],
    startDelayMs: 0,
    reaperHangs: false,
    containers: ["web-1", "web-2"],
    async resolve(target) {
      if (target.kind !== "docker") throw new Error("fake backend takes docker targets");
      return { container: target.container, label: `fake/${target.container}` };
    },
    async exec(_target, command, size, handlers: ExecHandlers) {
      backend.execs++;
      // As the gateway's wrapper does (shell.ts), one started to wait takes START_SIGNAL before its shell reads anything.
      let waiting = command[4] === "wait";
      const pid = nextPid++;
      let current = { ...size };
      let ended = false;
      const script = backend.script;
      backend.script = [];
      setTimeout(() => {
        handlers.onOutput(Buffer.from(`\x1b]7337;entryway-pid=${pid},${1000 + pid}\x07`), "stdout");
        for (const chunk of script) handlers.onOutput(chunk, "stdout");
      }, backend.startDelayMs);
      let line = "";
      return {
        write(data, written) {
          written?.();
          if (ended) return;
          if (waiting && data[0] === START_SIGNAL[0]) {
            waiting = false;
            data = data.subarray(1);
          }
          handlers.onOutput(data, "stdout");
          line += data.toString("utf8");
          let newline;
          while ((newline = line.indexOf("\n")) >= 0) {
            const command = line.slice(0, newline).trim();
            line = line.slice(newline + 1);
            const exit = /^exit (\d+)$/.exec(command);
            if (exit) {
              ended = true;
              setImmediate(() => handlers.onEnd({ exitCode: Number(exit[1]) }));
            } else if (command === "size")
              handlers.onOutput(Buffer.from(`${current.rows} ${current.cols}\n`), "stdout");
          }
        },
        closeStdin() {
          if (ended) return;
          ended = true;
          setImmediate(() => handlers.onEnd({ exitCode: 0 }));
        },
        async resize(cols, rows) {
          current = { cols, rows };
        },
        pause() {},
        resume() {},
        close() {
          ended = true;
        },
      };
    },
    async run(_target, command, { signal } = {}) {
      backend.reaped.push(Number(command[4]));
      if (!backend.reaperHangs) return 1;
      // A container whose user made the reaper hang (a /bin/sh or kill that never returns): only the gateway's deadline ends the wait.
      return new Promise((_resolve, reject) =>
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true }),
      );
    },
    async list() {
      return backend.containers.map((container) => ({
        target: { kind: "docker" as const, container },
        containers: [],
      }));
    },
    async check() {},
  };
  return backend;
}
