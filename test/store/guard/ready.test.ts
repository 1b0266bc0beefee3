import { describe, expect, it } from "vitest";
import { GuardedStore } from "../../../src/store/guard/guarded-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
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
    expect(warnings).toEqual(["store not ready at start: serving by the failure policy until it answers"]);
    expect(errors).toEqual(["connection"]);
  });
});
