import { describe, expect, it } from "vitest";
import { systemTimers } from "../../src/engine/types.js";

/** The production deadline timers: Node's, unref'ed (the fake clock stands in for them elsewhere). */
describe("systemTimers", () => {
  it("fires a callback once, no earlier than its duration", async () => {
    const started = performance.now();
    let calls = 0;
    const elapsed = await new Promise<number>((resolve) => {
      systemTimers.set(() => {
        calls++;
        resolve(performance.now() - started);
      }, 20);
    });
    expect(elapsed).toBeGreaterThanOrEqual(19);
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBe(1);
  });

  it("never fires a cleared callback; clearing twice is a no-op", async () => {
    let fired = false;
    const handle = systemTimers.set(() => {
      fired = true;
    }, 5);
    systemTimers.clear(handle);
    systemTimers.clear(handle);
    await new Promise((r) => setTimeout(r, 30));
    expect(fired).toBe(false);
  });

  it("does not keep the process alive", () => {
    const handle = systemTimers.set(() => {}, 60_000);
    expect((handle as NodeJS.Timeout).hasRef()).toBe(false);
    systemTimers.clear(handle);
  });
});
