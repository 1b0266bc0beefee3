import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CallTimeoutError, withDeadline } from "../../../src/store/redis/deadline.js";
import { classifyRedisError } from "../../../src/store/redis/errors.js";

describe("withDeadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("rejects a call that never settles once its deadline passes", async () => {
    const pending = withDeadline(new Promise<never>(() => {}), 400);
    let settled = false;
    const outcome = pending
      .catch((e: unknown) => e)
      .finally(() => {
        settled = true;
      });
    await vi.advanceTimersByTimeAsync(399);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(CallTimeoutError);
    expect(classifyRedisError(err, "take")).toMatchObject({ code: "timeout", transient: true });
  });

  it("passes a result through and leaves no timer behind", async () => {
    await expect(withDeadline(Promise.resolve(7), 400)).resolves.toBe(7);
    expect(vi.getTimerCount()).toBe(0);
  });
});
