// A stand-in for the WebSocket under the output framer (gateway/src/output.ts): it records each frame
// and completes the writes only when the test says so.
import { type FrameSend } from "../../gateway/src/output.js";
import { decodeResponse } from "../../gateway/src/protocol.js";

/** A socket that records each frame (copied: the framer reuses its buffers) and completes writes when told. */
export function frameSocket() {
  const frames: Buffer[] = [];
  const pending: (() => void)[] = [];
  const send: FrameSend = (frame, written) => {
    frames.push(Buffer.from(frame));
    pending.push(() => written());
  };
  const writeAll = () => pending.splice(0).forEach((done) => done());
  return { frames, send, writeAll, contents: () => frames.map((f) => decodeResponse(f).content.toString("latin1")) };
}
