/**
 * Calendar windows on the memory store with a fake clock: the counter resets at the calendar
 * boundary of the rule's zone, across DST changes, month ends, leap days and ISO weeks.
 */
import { describe, expect, it } from "vitest";
import type { Calendar } from "../../../src/engine/calendar.js";
import { type Policy, UNIT_MS } from "../../../src/engine/types.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const HOUR = 3_600_000;
const policy = (calendar: Calendar, limit = 3): Policy => ({
  algorithm: "fixed_window",
  limit,
  periodMs: UNIT_MS[calendar.unit],
  burst: limit,
  calendar,
});

function setup(iso: string) {
  const clock = new FakeClock(Date.parse(iso));
  const store = new MemoryStore({ clock });
  const take = async (p: Policy, cost = 1, key = "{t}:cal") => {
    const [o] = await store.take([{ key, policy: p, cost }]);
    if (o === undefined) throw new Error("no outcome");
    return o;
  };
  return { clock, take };
}

describe("calendar windows on the memory store", () => {
  it("a Berlin day that springs forward lasts 23 hours", async () => {
    // 2026-03-29 00:30 Berlin (CET) = 2026-03-28T23:30Z; the day ends at 2026-03-29T22:00Z.
    const { clock, take } = setup("2026-03-28T23:30:00Z");
    const day = policy({ unit: "day", timeZone: "Europe/Berlin" }, 2);
    const first = await take(day, 2);
    expect(first.resetAfterMs).toBe(22.5 * HOUR);
    clock.advance(22.5 * HOUR - 1);
    expect(await take(day)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.advance(1);
    const next = await take(day);
    expect(next).toMatchObject({ allowed: true, remaining: 1 });
    expect(next.resetAfterMs).toBe(24 * HOUR);
  });

  it("a Berlin day that falls back lasts 25 hours", async () => {
    const { take } = setup("2026-10-24T22:00:00Z");
    expect((await take(policy({ unit: "day", timeZone: "Europe/Berlin" }))).resetAfterMs).toBe(25 * HOUR);
  });

  it("a month resets on the 1st: 29 days in February of a leap year, then 31 in March", async () => {
    const { clock, take } = setup("2028-02-01T00:00:00Z");
    const month = policy({ unit: "month", timeZone: "UTC" }, 5);
    expect((await take(month, 5)).resetAfterMs).toBe(29 * 24 * HOUR);
    clock.advance(Date.parse("2028-02-29T23:59:59.999Z") - clock.now());
    expect(await take(month)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1 });
    clock.advance(1);
    const march = await take(month);
    expect(march).toMatchObject({ allowed: true, remaining: 4 });
    expect(march.resetAfterMs).toBe(31 * 24 * HOUR);
  });

  it("an ISO week runs Monday to Sunday in the rule's zone", async () => {
    // 2027-01-03 is a Sunday; in New York (UTC-5) its end is Monday 2027-01-04T05:00Z.
    const { take } = setup("2027-01-03T12:00:00Z");
    const week = policy({ unit: "week", timeZone: "America/New_York" });
    expect((await take(week)).resetAfterMs).toBe(
      Date.parse("2027-01-04T05:00:00Z") - Date.parse("2027-01-03T12:00:00Z"),
    );
  });
});
