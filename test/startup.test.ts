import { describe, expect, it } from "vitest";
import { Startup, StartupError } from "../src/startup.js";

describe("Startup", () => {
  it("closes what earlier steps opened, last first, when a step fails, and names the failed step", async () => {
    const startup = new Startup();
    const closed: string[] = [];
    await startup.step("a", () => ({ value: 1, close: () => void closed.push("a") }));
    await startup.step("b", () => ({ value: 2 }));
    await startup.step("c", async () => ({ value: 3, close: async () => void closed.push("c") }));
    const err = await startup
      .step("d", () => {
        throw new Error("port taken");
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).step).toBe("d");
    expect((err as StartupError).message).toBe('startup step "d" failed: port taken');
    expect(startup.open).toEqual(["a", "c"]);
    expect(await startup.close()).toEqual([
      { step: "c", ok: true },
      { step: "a", ok: true },
    ]);
    expect(closed).toEqual(["c", "a"]);
    expect(startup.open).toEqual([]);
  });

  it("keeps closing past a close that throws or hangs, each within its bound, and never throws", async () => {
    const startup = new Startup({ closeWithinMs: 50 });
    const closed: string[] = [];
    await startup.step("first", () => ({ value: 0, close: () => void closed.push("first") }));
    await startup.step("hangs", () => ({ value: 0, close: () => new Promise<void>(() => {}) }));
    await startup.step("throws", () => ({
      value: 0,
      close: () => {
        throw new Error("boom");
      },
    }));
    const started = performance.now();
    const results = await startup.close();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(results.map((r) => [r.step, r.ok, r.timedOut === true])).toEqual([
      ["throws", false, false],
      ["hangs", false, true],
      ["first", true, false],
    ]);
    expect(closed).toEqual(["first"]);
    expect(await startup.close()).toBe(results);
  });
});
