import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { GuardedStore } from "../../../src/store/guard/guarded-store.js";
import { PartitionedGuard } from "../../../src/store/guard/partitioned.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import type { Take } from "../../../src/store/store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const policy: Policy = { algorithm: "gcra", limit: 2, periodMs: 3_600_000, burst: 2 };

/** A shared store whose keys starting with "down:" fail, as if their master were gone. */
function setup() {
  const clock = new FakeClock();
  const shared = new MemoryStore({ clock });
  const inner = {
    kind: "fake-cluster",
    take: (t: readonly Take[]) =>
      t.some((x) => x.key.startsWith("down:")) ? Promise.reject(new Error("node gone")) : shared.take(t),
    refund: (t: readonly Take[]) => shared.refund(t),
    reset: (k: readonly string[]) => shared.reset(k),
    ready: async () => {},
    close: async () => {},
  };
  const fallback = new MemoryStore({ clock });
  const guard = new PartitionedGuard({
    inner,
    nodeOf: (key) => key.split(":")[0] ?? "",
    guardFor: () =>
      new GuardedStore({
        inner,
        fallback,
        clock,
        defaultPolicy: "deny",
        breaker: { consecutiveFailures: 2 },
      }),
  });
  const peek = async (key: string) => (await shared.take([{ key, policy, cost: 0 }]))[0]?.remaining;
  return { guard, peek };
}

const t = (key: string, cost = 1): Take => ({ key, policy, cost });

describe("a guard per cluster node", () => {
  it("opens only the failing node's breaker; the live node's keys stay exact", async () => {
    const { guard } = setup();
    for (let i = 0; i < 3; i++) await guard.take([t("down:a")]);
    const live = [
      await guard.take([t("up:b")]),
      await guard.take([t("up:b")]),
      await guard.take([t("up:b")]),
    ];
    expect(live.map((o) => o[0]?.allowed)).toEqual([true, true, false]); // exactly its limit of 2
    expect(guard.status().nodes).toEqual({ down: "open", up: "closed" });
    expect(guard.state).toBe("open");
  });

  it("keeps a call across nodes all-or-nothing: the part that charged is refunded when another denies", async () => {
    const { guard, peek } = setup();
    const out = await guard.take([t("up:x"), t("down:y")]);
    expect(out.map((o) => o.allowed)).toEqual([true, false]); // the down part answers by policy (deny)
    expect(await peek("up:x")).toBe(2); // nothing kept on the live node
  });
});
