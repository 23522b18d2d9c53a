// gateway/src/output.ts: the output framer (frames byte-identical to protobuf.js's, output gathered
// behind a frame being written, cuts on character boundaries, the 1 ms wait only for bulk,
// backpressure, buffers reused), against a socket that completes writes when the test says so.
import { describe, expect, it, vi } from "vitest";
import { OutputFramer } from "../../src/output.js";
import { decodeResponse, encodeResponse, ResponseType } from "../../src/protocol.js";
import { frameSocket } from "../../../testkit/gateway/frame-socket.js";
import { fatal, samples } from "../../../testkit/gateway/utf8-samples.js";

const options = {
  frameBytes: 32,
  text: true,
  highBytes: 1 << 20,
  lowBytes: 1 << 18,
  onPause: () => {},
  onResume: () => {},
};

describe("output frames (OutputFramer)", () => {
  it("sends output at once when the socket is idle, as protobuf.js encodes the message, at every length-varint size", () => {
    for (const length of [1, 127, 128, 16383, 16384, 65000]) {
      for (const msgType of [ResponseType.STDOUT, ResponseType.STDERR]) {
        const s = frameSocket();
        const content = Buffer.alloc(length, "x");
        new OutputFramer(s.send, { ...options, frameBytes: 1 << 20 }).push(content, msgType);
        expect(s.frames).toEqual([encodeResponse({ msgType, content })]);
      }
    }
  });

  it("gathers output behind a frame the socket is still writing, and sends it as one frame when that write is done", () => {
    const s = frameSocket();
    const framer = new OutputFramer(s.send, options);
    framer.push(Buffer.from("a"), ResponseType.STDOUT);
    framer.push(Buffer.from("b"), ResponseType.STDOUT);
    framer.push(Buffer.from("c"), ResponseType.STDOUT);
    expect(s.contents()).toEqual(["a"]);
    s.writeAll();
    expect(s.contents()).toEqual(["a", "bc"]);
  });

  it.each(samples)(
    "cuts frames at frameBytes on character boundaries (%s at every offset); pipe mode cuts bytes",
    (char) => {
      for (let lead = 0; lead < 8; lead++) {
        const text = "x".repeat(lead) + char.repeat(12);
        const s = frameSocket();
        const framer = new OutputFramer(s.send, { ...options, frameBytes: 8 });
        framer.push(Buffer.from(text), ResponseType.STDOUT);
        s.writeAll();
        framer.flush();
        for (const frame of s.frames) {
          const content = decodeResponse(frame).content;
          expect(content.length).toBeLessThanOrEqual(8);
          expect(() => fatal.decode(content)).not.toThrow();
        }
        expect(Buffer.concat(s.frames.map((f) => decodeResponse(f).content)).toString()).toBe(text);
      }
      const s = frameSocket();
      const bytes = 1 + 4 * Buffer.byteLength(char);
      new OutputFramer(s.send, { ...options, frameBytes: 8, text: false }).push(
        Buffer.from("x" + char.repeat(4)),
        ResponseType.STDOUT,
      );
      s.writeAll(); // full frames go at once, the rest when the socket has written them
      expect(s.frames.map((f) => decodeResponse(f).content.length)).toEqual([
        ...Array(Math.floor(bytes / 8)).fill(8),
        bytes % 8,
      ]);
    },
  );

  it("holds the first bytes of a character until the rest comes, and sends them at the end (flush)", () => {
    const s = frameSocket();
    const framer = new OutputFramer(s.send, options);
    const bytes = Buffer.from("你");
    framer.push(bytes.subarray(0, 2), ResponseType.STDOUT);
    expect(s.frames).toEqual([]);
    framer.push(bytes.subarray(2), ResponseType.STDOUT);
    expect(s.contents()).toEqual([bytes.toString("latin1")]);
    framer.push(bytes.subarray(0, 1), ResponseType.STDOUT);
    framer.flush();
    expect(s.frames.at(-1)).toEqual(encodeResponse({ msgType: ResponseType.STDOUT, content: bytes.subarray(0, 1) }));
  });

  it("waits up to 1 ms to fill a frame when output is bulk, never for output at a person's pace", async () => {
    vi.useFakeTimers();
    try {
      const s = frameSocket();
      const framer = new OutputFramer(s.send, { ...options, frameBytes: 32 * 1024 });
      framer.push(Buffer.from("prompt$ "), ResponseType.STDOUT);
      s.writeAll();
      expect(s.frames).toHaveLength(1); // not bulk: at once
      for (let i = 0; i < 16; i++) {
        framer.push(Buffer.alloc(4096, "y"), ResponseType.STDOUT); // 64 KiB within the same millisecond
        s.writeAll();
      }
      const before = s.frames.length;
      framer.push(Buffer.alloc(100, "z"), ResponseType.STDOUT);
      expect(s.frames).toHaveLength(before); // bulk: the frame waits for more
      framer.push(Buffer.alloc(100, "z"), ResponseType.STDOUT);
      await vi.advanceTimersByTimeAsync(1);
      expect(s.frames).toHaveLength(before + 1);
      expect(decodeResponse(s.frames.at(-1)!).content.length).toBeGreaterThanOrEqual(200);
      s.writeAll();
      await vi.advanceTimersByTimeAsync(100); // a pause: the output is no longer bulk
      framer.push(Buffer.from("k"), ResponseType.STDOUT);
      expect(s.frames).toHaveLength(before + 2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("pauses the exec above highBytes queued and resumes at lowBytes, and reuses its frame buffers", () => {
    const s = frameSocket();
    const calls: string[] = [];
    const sent: Buffer[] = [];
    const framer = new OutputFramer(
      (frame, written) => {
        sent.push(frame);
        s.send(frame, written);
      },
      {
        ...options,
        frameBytes: 100,
        text: false,
        highBytes: 250,
        lowBytes: 100,
        onPause: () => calls.push("pause"),
        onResume: () => calls.push("resume"),
      },
    );
    framer.push(Buffer.alloc(400, "x"), ResponseType.STDOUT);
    expect(calls).toEqual(["pause"]);
    expect(framer.queued).toBeGreaterThan(250);
    s.writeAll();
    expect(calls).toEqual(["pause", "resume"]);
    framer.push(Buffer.alloc(150, "y"), ResponseType.STDOUT); // more than a frame: frame buffers again
    expect(sent.slice(0, 4).map((f) => f.buffer)).toContain(sent.at(-1)!.buffer); // one back from the pool
  });
});
