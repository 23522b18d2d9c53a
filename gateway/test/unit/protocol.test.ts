// gateway/src/protocol.ts: Entry's messages (requests, responses with the exit code extension, output
// frames encoded by hand) and WINCH parsing.
import { describe, expect, it } from "vitest";
import {
  decodeRequest,
  decodeResponse,
  encodeOutput,
  encodeRequest,
  encodeResponse,
  parseWinch,
  RequestType,
  ResponseType,
} from "../../src/protocol.js";

describe("Entry's messages", () => {
  it("round-trips requests and responses, with the exit code extension", () => {
    expect(decodeRequest(encodeRequest(RequestType.WINCH, "80 24"))).toEqual({
      msgType: 1,
      content: Buffer.from("80 24"),
    });
    const close = decodeResponse(
      encodeResponse({ msgType: ResponseType.CLOSE, content: Buffer.from("bye"), exitCode: 0, closeCode: "exit" }),
    );
    expect(close).toEqual({ msgType: 2, content: Buffer.from("bye"), exitCode: 0, closeCode: "exit" });
    expect(
      decodeResponse(encodeResponse({ msgType: ResponseType.PING, content: Buffer.alloc(0) })).exitCode,
    ).toBeUndefined();
  });

  it("stays readable by a client that knows only Entry's two fields", () => {
    // Hand-encoded the way Entry's Go client decodes: field 1 varint, field 2 bytes; extensions are skipped fields.
    const frame = encodeResponse({
      msgType: ResponseType.CLOSE,
      content: Buffer.from("ok"),
      exitCode: 3,
      closeCode: "exit",
    });
    expect(frame.subarray(0, 6)).toEqual(Buffer.from([0x08, 0x02, 0x12, 0x02, 0x6f, 0x6b]));
  });

  it("encodes output frames byte for byte as the protobuf encoder does, at every length-varint size", () => {
    for (const length of [0, 1, 127, 128, 16_383, 16_384, 70_000]) {
      const content = Buffer.alloc(length, 0x61);
      for (const msgType of [ResponseType.STDOUT, ResponseType.STDERR, ResponseType.PING]) {
        expect(encodeOutput(msgType, content).equals(encodeResponse({ msgType, content }))).toBe(true);
      }
    }
  });

  it("parses WINCH, ignoring unusable sizes and clamping huge ones", () => {
    expect(parseWinch(Buffer.from("120 40"))).toEqual({ cols: 120, rows: 40 });
    expect(parseWinch(Buffer.from("abc"))).toBeNull();
    expect(parseWinch(Buffer.from("0 0"))).toBeNull();
    expect(parseWinch(Buffer.from(""))).toBeNull();
    expect(parseWinch(Buffer.from("99999 99999"))).toEqual({ cols: 4096, rows: 4096 });
  });
});
