import { describe, expect, it } from "vitest";
import { queuedTimers } from "../src/timers.js";
import { FakeClock } from "./helpers/fake-clock.js";

/** Queued timers over a fake clock and fake base timers: time moves only by `advance`. */
function setup() {
  const time = new FakeClock(0);
  const timers = queuedTimers(time, () => time.now());
  const fired: string[] = [];
  const at = (name: string) => () => fired.push(`${name}@${time.now()}`);
  return { time, timers, fired, at };
}

describe("queuedTimers", () => {
  it("fires each callback once, no earlier than its duration, in the order set", async () => {
    const { time, timers, fired, at } = setup();
    timers.set(at("a"), 10);
    await time.tick(3);
    timers.set(at("b"), 10);
    timers.set(at("c"), 10);
    await time.tick(6);
    expect(fired).toEqual([]);
    await time.tick(1);
    expect(fired).toEqual(["a@10"]);
    await time.tick(3);
    expect(fired).toEqual(["a@10", "b@13", "c@13"]);
    await time.tick(50);
    expect(fired).toHaveLength(3);
  });

  it("never fires a cleared callback, and arms one base timer per duration at a time", async () => {
    const { time, timers, fired, at } = setup();
    const handles = Array.from({ length: 100 }, (_, i) => timers.set(at(`t${i}`), 10));
    expect(time.pendingTimers).toBe(1);
    for (const h of handles.slice(0, 99)) timers.clear(h);
    timers.clear(handles[0]); // twice: a no-op
    await time.tick(10);
    expect(fired).toEqual(["t99@10"]);
    expect(time.pendingTimers).toBe(0);
  });

  it("keeps durations apart: a short one set after a long one fires first", async () => {
    const { time, timers, fired, at } = setup();
    timers.set(at("long"), 1000);
    timers.set(at("short"), 5);
    await time.tick(1000);
    expect(fired).toEqual(["short@5", "long@1000"]);
  });

  it("skips cleared entries at the front and re-arms for the first live one", async () => {
    const { time, timers, fired, at } = setup();
    const first = timers.set(at("first"), 10);
    await time.tick(4);
    timers.set(at("second"), 10);
    timers.clear(first);
    await time.tick(6); // the base timer fires at 10 for the cleared entry
    expect(fired).toEqual([]);
    await time.tick(4);
    expect(fired).toEqual(["second@14"]);
  });

  it("queues a timer set from inside a callback without arming a second base timer", async () => {
    const { time, timers, fired, at } = setup();
    timers.set(() => {
      fired.push(`outer@${time.now()}`);
      timers.set(at("inner"), 10);
    }, 10);
    await time.tick(10);
    expect(time.pendingTimers).toBe(1);
    await time.tick(10);
    expect(fired).toEqual(["outer@10", "inner@20"]);
  });

  it("ignores a stale handle once its duration's queue is gone and its slot serves another", async () => {
    const { time, timers, fired, at } = setup();
    const stale = timers.set(at("old"), 10);
    await time.tick(10); // fires; the queue of 10 ms empties and is dropped
    timers.set(at("new"), 20); // a new queue, which may reuse the dropped one's slot
    timers.clear(stale);
    await time.tick(20);
    expect(fired).toEqual(["old@10", "new@30"]);
  });

  it("uses base timers for durations past the queues it keeps, and clears them there too", async () => {
    const { time, timers, fired, at } = setup();
    for (let ms = 1; ms <= 256; ms++) timers.set(() => {}, 1000 + ms);
    expect(time.pendingTimers).toBe(256);
    const kept = timers.set(at("past"), 5);
    const cleared = timers.set(at("cleared"), 6);
    expect(time.pendingTimers).toBe(258);
    timers.clear(cleared);
    await time.tick(10);
    expect(fired).toEqual(["past@5"]);
    expect(kept).not.toBeTypeOf("number");
  });

  it("keeps order and callbacks across the ring's growth", async () => {
    const { time, timers, fired } = setup();
    const handles: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      handles.push(timers.set(() => fired.push(String(i)), 10));
      if (i % 3 === 0) await time.tick(0.01);
    }
    for (let i = 0; i < 300; i += 2) timers.clear(handles[i]);
    await time.tick(20);
    expect(fired).toEqual(Array.from({ length: 150 }, (_, k) => String(2 * k + 1)));
  });

  it("runs on Node's timers by default", async () => {
    const timers = queuedTimers();
    const started = performance.now();
    const elapsed = await new Promise<number>((resolve) => {
      timers.set(() => resolve(performance.now() - started), 20);
    });
    expect(elapsed).toBeGreaterThanOrEqual(19);
  });
});
