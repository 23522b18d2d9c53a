// gateway/src/backends/docker.ts without an engine: the exec start answer read by hand (from a socket
// that answers as an engine would) and the multiplexed stream of an exec without a TTY, cut at every
// offset. The backend against a real engine (podman) is gateway/test/docker.test.ts.
import { describe, expect, it } from "vitest";
import { dockerBackend, StreamDemuxer } from "../../../src/backends/docker.js";
import { dockerFrame, fakeEngine } from "../../../../testkit/gateway/fake-engine.js";

describe("Docker exec start, read by hand (no engine: a socket that answers as one)", () => {
  const target = { container: "c", label: "docker/c" };

  it("takes the stream that follows a 101 in the same read, demultiplexed without a TTY, and the exit code", async () => {
    const engine = await fakeEngine(
      "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n" +
        dockerFrame(1, "out").toString("latin1") +
        dockerFrame(2, "err").toString("latin1"),
    );
    try {
      const seen: string[] = [];
      const ended = new Promise<number | null>(
        (resolve) =>
          void dockerBackend(engine.url).exec(
            target,
            ["sh"],
            { cols: 80, rows: 24 },
            {
              onOutput: (chunk, which) => void seen.push(`${which}:${chunk.toString()}`),
              onEnd: (r) => resolve(r.exitCode),
            },
            { tty: false },
          ),
      );
      expect(await ended).toBe(7);
      expect(seen).toEqual(["stdout:out", "stderr:err"]);
    } finally {
      await engine.stop();
    }
  });

  it("refuses an answer that is not an upgrade", async () => {
    const engine = await fakeEngine(
      'HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{"message":"no such exec"}',
    );
    try {
      await expect(
        dockerBackend(engine.url).exec(target, ["sh"], { cols: 80, rows: 24 }, { onOutput: () => {}, onEnd: () => {} }),
      ).rejects.toThrow(/HTTP 404 instead of an upgrade/);
    } finally {
      await engine.stop();
    }
  });
});

describe("Docker's multiplexed exec stream (no TTY)", () => {
  it("splits stdout from stderr with the stream cut at every offset", () => {
    const stream = Buffer.concat([
      dockerFrame(1, "out 你\n"),
      dockerFrame(2, "err\n"),
      dockerFrame(1, ""),
      dockerFrame(1, "more"),
    ]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const seen: Record<string, string[]> = { stdout: [], stderr: [] };
      const demuxer = new StreamDemuxer((chunk, which) => seen[which]!.push(chunk.toString("latin1")));
      demuxer.push(stream.subarray(0, cut));
      demuxer.push(stream.subarray(cut));
      expect(Buffer.from(seen.stdout!.join(""), "latin1").toString()).toBe("out 你\nmore");
      expect(seen.stderr!.join("")).toBe("err\n");
    }
  });
});
