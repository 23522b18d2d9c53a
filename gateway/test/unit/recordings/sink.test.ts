// gateway/src/recordings/sink.ts: a recording's header (its metadata) and events are one JSON line
// each, without raw C1 controls or line separators.
import { describe, expect, it } from "vitest";
import { CastEncoder, event as castEvent } from "../../../src/recordings/sink.js";
import { command, expectOneLine } from "../../../../testkit/gateway/json-lines.js";

describe("every JSON line the gateway writes is one line, without raw C1 controls or line separators", () => {
  it("a recording's header (its metadata) and events", () => {
    const header = new CastEncoder().header(
      { session: "s1", user: command[2], target: command[2] },
      { cols: 80, rows: 24 },
    );
    expect(expectOneLine(header)).toMatchObject({ title: command[2], entryway: { user: command[2] } });
    expect(expectOneLine(castEvent(1, "o", command[2]))).toEqual([1, "o", command[2]]);
  });
});
