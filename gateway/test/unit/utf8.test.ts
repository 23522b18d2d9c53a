// gateway/src/utf8.ts: the UTF-8 carry between output chunks and the splitting of output into frames
// on character boundaries, at every split point of a 3- and a 4-byte character.
import { describe, expect, it } from "vitest";
import { incompleteTailLength, splitOnCharBoundaries, Utf8Carry } from "../../src/utf8.js";
import { fatal, samples } from "../../../testkit/gateway/utf8-samples.js";

describe("UTF-8 framing", () => {
  it.each(samples)("carries the incomplete tail of %s at every split point", (char) => {
    const bytes = Buffer.from(`a${char}b${char}`);
    for (let split = 0; split <= bytes.length; split++) {
      const carry = new Utf8Carry();
      const frames = [carry.push(bytes.subarray(0, split)), carry.push(bytes.subarray(split)), carry.flush()];
      for (const frame of frames) expect(() => fatal.decode(frame)).not.toThrow();
      expect(Buffer.concat(frames).toString()).toBe(`a${char}b${char}`);
    }
  });

  it.each(samples)("carries %s split byte by byte", (char) => {
    const carry = new Utf8Carry();
    const frames = [...Buffer.from(char)].map((byte) => carry.push(Buffer.from([byte])));
    expect(frames.slice(0, -1).every((f) => f.length === 0)).toBe(true);
    expect(frames.at(-1)!.toString()).toBe(char);
  });

  it("does not hold back invalid bytes forever", () => {
    expect(incompleteTailLength(Buffer.from([0x80, 0x80, 0x80]))).toBe(0);
    expect(incompleteTailLength(Buffer.from([0x41]))).toBe(0);
    expect(incompleteTailLength(Buffer.from([0xf0, 0x9f, 0x98]))).toBe(3);
  });

  it.each(samples)("splits output into bounded frames on character boundaries (%s)", (char) => {
    for (let max = 4; max <= 9; max++) {
      for (let lead = 0; lead < max; lead++) {
        const data = Buffer.from("x".repeat(lead) + char.repeat(5));
        const pieces = splitOnCharBoundaries(data, max);
        for (const piece of pieces) {
          expect(piece.length).toBeLessThanOrEqual(max);
          expect(() => fatal.decode(piece)).not.toThrow();
        }
        expect(Buffer.concat(pieces).equals(data)).toBe(true);
      }
    }
  });
});
