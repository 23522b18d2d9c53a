// gateway/src/limits.ts: the limits before authentication, on a fixed clock.
import { describe, expect, it } from "vitest";
import { PreAuthLimits } from "../../src/limits.js";

describe("limits before authentication", () => {
  it("caps waiting connections in all and per address, and attempts per address per minute (token bucket)", () => {
    let now = 0;
    const limits = new PreAuthLimits(
      { maxPendingConnections: 3, maxPendingPerSource: 2, authAttemptsPerMinute: 4 },
      () => now,
    );
    expect(limits.admit("a")).toBeNull();
    expect(limits.admit("a")).toBeNull();
    expect(limits.admit("a")).toMatchObject({ status: 429 });
    expect(limits.admit("b")).toBeNull();
    expect(limits.admit("c")).toMatchObject({ status: 503 });
    limits.release("a");
    limits.release("a");
    expect(limits.admit("a")).toBeNull(); // third attempt
    limits.release("a");
    expect(limits.admit("a")).toBeNull(); // fourth
    limits.release("a");
    expect(limits.admit("a")).toMatchObject({ status: 429, reason: expect.stringMatching(/attempts a minute/) });
    now += 15_000; // a quarter of a minute buys one attempt back
    expect(limits.admit("a")).toBeNull();
    limits.release("a");
    expect(limits.admit("a")).toMatchObject({ status: 429 });
  });
});
