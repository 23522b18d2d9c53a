// The page's hand-written codec (no protobufjs in the browser: its generated code needs eval, which
// the CSP forbids) must agree with protobufjs on Entry's messages, extensions included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeRequest, encodeResponse } from "../../src/protocol.js";
import { decodeResponse, encodeRequest } from "../../web/codec.js";

describe("web codec", () => {
  it("encodes requests that protobufjs decodes", () => {
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 2, 7, 300), fc.uint8Array({ maxLength: 2000 }), (msgType, content) => {
        const decoded = decodeRequest(encodeRequest(msgType, content));
        expect(decoded.msgType).toBe(msgType);
        expect(Buffer.compare(decoded.content, Buffer.from(content))).toBe(0);
      }),
    );
    expect(decodeRequest(encodeRequest(1, "120 40")).content.toString()).toBe("120 40");
  });

  it("decodes what protobufjs encodes, exit codes and close codes included", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 1, 2, 3),
        fc.uint8Array({ maxLength: 2000 }),
        fc.option(fc.integer({ min: -2147483648, max: 2147483647 }), { nil: undefined }),
        fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
        (msgType, content, exitCode, closeCode) => {
          const frame = encodeResponse({
            msgType,
            content: Buffer.from(content),
            ...(exitCode !== undefined ? { exitCode } : {}),
            ...(closeCode ? { closeCode } : {}),
          });
          const decoded = decodeResponse(frame);
          expect(decoded.msgType).toBe(msgType);
          expect(Buffer.from(decoded.content).equals(Buffer.from(content))).toBe(true);
          expect(decoded.exitCode).toBe(exitCode);
          expect(decoded.closeCode).toBe(closeCode);
        },
      ),
    );
  });

  it("skips unknown fields and rejects truncated frames", () => {
    // field 9 varint, field 10 length-delimited, then content "ok"
    const frame = Uint8Array.from([0x48, 0x96, 0x01, 0x52, 0x02, 0x61, 0x62, 0x12, 0x02, 0x6f, 0x6b]);
    expect(Buffer.from(decodeResponse(frame).content).toString()).toBe("ok");
    expect(() => decodeResponse(Uint8Array.from([0x12, 0x05, 0x61]))).toThrow(/truncated/);
  });
});
