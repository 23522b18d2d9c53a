// The attack on JSON lines (audit file and records, logs, recordings): a command holding characters
// that a reader of lines would take as a line break or a terminal as a control, and the check that
// a written line is still one line without them raw.
import { expect } from "vitest";

/** A command (allowCommand) holding U+2028, NEL (U+0085), CSI (U+009B), DEL and U+2029. */
export const command = ["sh", "-c", "echo a\u2028b\u0085c\u009b31md\u007fe\u2029f"];

// What Python's str.splitlines() breaks a line at (docs.python.org/3/library/stdtypes.html#str.splitlines).
// eslint-disable-next-line no-control-regex -- control characters are what it matches
const lineBreaks = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const raw = /[\u007f-\u009f\u2028\u2029]/;

/** A session.start audit record carrying the command. */
export const record = {
  event: "session.start" as const,
  session: "s1",
  target: "t",
  command,
  client: "127.0.0.1",
  startedAt: new Date().toISOString(),
};

/** Asserts `text` is one newline-ended line without raw DEL, C1 controls or U+2028/U+2029; returns it parsed. */
export const expectOneLine = (text: string) => {
  expect(text.endsWith("\n")).toBe(true);
  expect(text.slice(0, -1).split(lineBreaks)).toHaveLength(1);
  expect(text).not.toMatch(raw);
  return JSON.parse(text) as unknown;
};
