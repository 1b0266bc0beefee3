import { describe, expect, it } from "vitest";
import { GuardedStore } from "../../../src/store/guard/guarded-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import type { Take } from "../../../src/store/store.js";
import { ControllableStore, connectionError } from "./controllable-store.js";

/** A store whose ready() fails, like Redis unreachable at boot. */
class DownAtBoot extends ControllableStore {
  override async ready(): Promise<void> {
    throw connectionError();
  }
}

describe("GuardedStore.ready", () => {
  it("resolves when the inner store is not ready at start, logs once and counts the error", async () => {
    const warnings: string[] = [];
    const errors: string[] = [];
    const guard = new GuardedStore({
      inner: new DownAtBoot(),
      fallback: new MemoryStore({ clock: { now: () => 0 } }),
      logger: { info() {}, warn: (_obj, msg) => warnings.push(msg) },
      events: { breakerState() {}, degraded() {}, storeError: (kind) => errors.push(kind) },
    });
    await expect(guard.ready()).resolves.toBeUndefined();
    expect(warnings).toEqual([
      "store not ready at start: serving by the failure policy until it answers",
      "store circuit breaker open: decisions follow each rule's on_store_error policy",
    ]);
    expect(errors).toEqual(["connection"]);
  });

  it("opens the breaker at once (degraded, answers by policy without waiting), and probes when the store is ready", async () => {
    const inner = new DownAtBoot();
    const degraded: boolean[] = [];
    const guard = new GuardedStore({
      inner,
      fallback: new MemoryStore({ clock: { now: () => 0 } }),
      defaultPolicy: "deny",
      events: { breakerState() {}, degraded: (d) => degraded.push(d), storeError() {} },
    });
    await guard.ready();
    expect(guard.status()).toMatchObject({
      state: "open",
      degraded: true,
      lastError: { code: "connection" },
    });
    expect(degraded).toEqual([true]);
    const take: Take = {
      key: "k",
      policy: { algorithm: "gcra", limit: 1, periodMs: 1_000, burst: 1 },
      cost: 1,
    };
    expect((await guard.take([take]))[0]?.allowed).toBe(false);
    expect(inner.calls).toHaveLength(0);
    guard.storeReady();
    expect(guard.state).toBe("half_open");
    await guard.take([take]);
    expect(inner.calls).toHaveLength(1);
    expect(guard.state).toBe("closed");
    expect(degraded).toEqual([true, false]);
  });
});
