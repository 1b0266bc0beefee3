/**
 * The `--breaker-*` settings reach the guard's breaker: a store failing every other call (never
 * `--breaker-failures` in a row) opens it by failure ratio once `--breaker-min-calls` were made.
 */
import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { loadSettings } from "../../../src/settings.js";
import { breakerSettingsOf } from "../../../src/store/create.js";
import { GuardedStore } from "../../../src/store/guard/guarded-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import type { Take } from "../../../src/store/store.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { ControllableStore } from "./controllable-store.js";

const policy: Policy = { algorithm: "gcra", limit: 10, periodMs: 60_000, burst: 10 };
const take: Take = { key: "k", policy, cost: 1, onStoreError: "allow" };

function guardWith(argv: string[]) {
  const time = new FakeClock();
  const inner = new ControllableStore();
  const guard = new GuardedStore({
    inner,
    fallback: new MemoryStore({ clock: time }),
    clock: time,
    timers: time,
    random: () => 0.5,
    breaker: breakerSettingsOf(loadSettings(argv, {})),
    logger: { info: () => {}, warn: () => {} },
  });
  return { guard, inner };
}

/** `calls` takes, every other one failing; the breaker state after each. */
async function alternate(argv: string[], calls: number): Promise<string[]> {
  const { guard, inner } = guardWith(argv);
  const states: string[] = [];
  for (let i = 0; i < calls; i++) {
    inner.mode = i % 2 === 0 ? "fail" : "ok";
    await guard.take([take]);
    states.push(guard.state);
  }
  return states;
}

describe("--breaker-failure-percent, --breaker-window, --breaker-min-calls", () => {
  it("open the breaker on a 50% failure ratio after the minimum calls", async () => {
    const states = await alternate(["--breaker-failures", "100", "--breaker-min-calls", "6"], 8);
    // The ratio is judged on a failure: the 7th call fails, 4 of 7 (57%) ≥ 50% with ≥ 6 calls.
    expect(states.slice(0, 6)).toEqual(Array(6).fill("closed"));
    expect(states[6]).toBe("open");
  });

  it("keep it closed below the percentage or the minimum calls", async () => {
    const above = await alternate(
      ["--breaker-failures", "100", "--breaker-min-calls", "6", "--breaker-failure-percent", "60"],
      12,
    );
    expect(above).toEqual(Array(12).fill("closed"));
    const few = await alternate(["--breaker-failures", "100", "--breaker-min-calls", "50"], 30);
    expect(few).toEqual(Array(30).fill("closed"));
  });

  it("are parsed with their documented defaults and bounds", () => {
    expect(breakerSettingsOf(loadSettings([], {}))).toMatchObject({
      consecutiveFailures: 5,
      failureRatio: 0.5,
      windowMs: 10_000,
      minRequests: 20,
      baseMs: 250,
      maxMs: 1000,
    });
    expect(breakerSettingsOf(loadSettings(["--breaker-window", "30s"], {})).windowMs).toBe(30_000);
    expect(() => loadSettings(["--breaker-failure-percent", "101"], {})).toThrow(
      /--breaker-failure-percent: must be at most 100 \(got "101"\)/,
    );
    expect(() => loadSettings(["--breaker-window", "0s"], {})).toThrow(
      /--breaker-window: must be at least 100 ms \(got "0s"\)/,
    );
    expect(() => loadSettings([], { TOLLGATE_BREAKER_MIN_CALLS: "0" })).toThrow(
      /TOLLGATE_BREAKER_MIN_CALLS: must be at least 1/,
    );
  });
});
