import { describe, expect, it } from "vitest";
import { withDeadline } from "../../../src/store/guard/deadline.js";
import { StoreError } from "../../../src/store/store.js";
import { FakeClock, flush } from "../../helpers/fake-clock.js";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("withDeadline", () => {
  it("passes an answer through and cancels its timer when the call answers in time", async () => {
    const time = new FakeClock();
    const d = deferred<string>();
    const raced = withDeadline(d.promise, { ms: 10, timers: time, operation: "take" });
    d.resolve("yes");
    await expect(raced).resolves.toBe("yes");
    expect(time.pendingTimers).toBe(0);
  });

  it("rejects with a transient timeout StoreError once the deadline passes", async () => {
    const time = new FakeClock();
    const raced = withDeadline(new Promise<never>(() => {}), { ms: 10, timers: time, operation: "take" });
    const seen = raced.catch((e: unknown) => e);
    await time.tick(9);
    await time.tick(1);
    const err = await seen;
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: "timeout", transient: true });
    expect((err as Error).message).toContain("10 ms deadline");
  });

  it("drops a late answer, including a late rejection, and reports it as late", async () => {
    const time = new FakeClock();
    let late = 0;
    const d = deferred<string>();
    const raced = withDeadline(d.promise, { ms: 10, timers: time, operation: "take", onLate: () => late++ });
    const seen = raced.catch((e: unknown) => (e as StoreError).code);
    await time.tick(10);
    d.reject(new Error("late failure"));
    await flush();
    expect(await seen).toBe("timeout");
    expect(late).toBe(1);
  });
});
