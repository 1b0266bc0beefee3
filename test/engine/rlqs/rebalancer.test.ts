/** The rebalancer on a fake clock: armed only while a member is unsettled, one tick per period. */
import { describe, expect, it } from "vitest";
import { Rebalancer, TICKS_PER_INTERVAL, tickMs } from "../../../src/engine/rlqs/rebalancer.js";
import type { TickReads } from "../../../src/engine/rlqs/share.js";
import { FakeClock } from "../../helpers/fake-clock.js";

function member(interval: number | undefined) {
  const m = {
    unsettled: false,
    reportingIntervalMs: interval,
    calls: 0,
    reads: [] as TickReads[],
    async rebalance(reads: TickReads) {
      m.calls++;
      m.reads.push(reads);
    },
  };
  return m;
}

describe("Rebalancer", () => {
  it("ticks every reporting_interval/8 while a member is unsettled, and not at all otherwise", async () => {
    const clock = new FakeClock();
    const r = new Rebalancer({ timers: clock, clock });
    const m = member(800);
    r.add(m);
    r.wake(m);
    expect(clock.pendingTimers).toBe(0); // settled: nothing armed
    m.unsettled = true;
    r.wake(m);
    expect(clock.pendingTimers).toBe(1);
    await clock.tick(tickMs(800) - 1);
    expect(m.calls).toBe(0);
    await clock.tick(1);
    expect(m.calls).toBe(1);
    await clock.tick(3 * tickMs(800));
    expect(m.calls).toBe(4);
    m.unsettled = false;
    await clock.tick(10 * tickMs(800));
    expect(m.calls).toBe(4); // the armed tick finds it settled: no call, no re-arm
    expect(clock.pendingTimers).toBe(0);
    expect(tickMs(800)).toBe(800 / TICKS_PER_INTERVAL);
  });

  it("shares one set of reads per tick across members and skips settled ones", async () => {
    const clock = new FakeClock();
    const r = new Rebalancer({ timers: clock, clock });
    const a = member(400);
    const b = member(400);
    const c = member(400);
    for (const m of [a, b, c]) r.add(m);
    a.unsettled = true;
    b.unsettled = true;
    r.wake(a);
    r.wake(b); // one timer for both
    expect(clock.pendingTimers).toBe(1);
    await clock.tick(tickMs(400));
    expect([a.calls, b.calls, c.calls]).toEqual([1, 1, 0]);
    expect(a.reads[0]).toBe(b.reads[0]);
    r.delete(a);
    r.close();
    await clock.tick(10 * tickMs(400));
    expect([a.calls, b.calls]).toEqual([1, 1]);
  });

  it("arms the earlier of two periods", async () => {
    const clock = new FakeClock();
    const r = new Rebalancer({ timers: clock, clock });
    const slow = member(8000);
    const fast = member(160);
    slow.unsettled = true;
    fast.unsettled = true;
    r.add(slow);
    r.add(fast);
    r.wake(slow);
    r.wake(fast);
    expect(clock.pendingTimers).toBe(1);
    await clock.tick(tickMs(160));
    expect(slow.calls + fast.calls).toBe(2);
  });
});
