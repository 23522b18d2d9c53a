// A program on a real terminal (node-pty): the wrapper's start handshake and busybox's line editor
// are tried there, as a person's terminal runs them.
import pty from "node-pty";

/** A program on a real terminal (node-pty), with everything it printed so far. */
export function onTerminal(file: string, args: string[], env: Record<string, string> = {}) {
  const terminal = pty.spawn(file, args, {
    cols: 80,
    rows: 24,
    env: { PATH: "/usr/bin:/bin", HOME: "/", TERM: "xterm", ...env },
    encoding: null,
  });
  let output = "";
  terminal.onData((data) => void (output += (data as unknown as Buffer).toString("latin1")));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  const until = async (test: () => boolean, what: string) => {
    for (const deadline = Date.now() + 10_000; !test(); await new Promise((r) => setTimeout(r, 10))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output: ${JSON.stringify(output)}`);
    }
  };
  return {
    terminal,
    exited,
    until,
    get output() {
      return output;
    },
  };
}
