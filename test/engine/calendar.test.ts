import { describe, expect, it } from "vitest";
import {
  type Calendar,
  calendarWindow,
  computeCalendarWindow,
  isTimeZone,
  pickWindowEnd,
} from "../../src/engine/calendar.js";

const at = (iso: string) => Date.parse(iso);
const window = (iso: string, calendar: Calendar) => {
  const w = computeCalendarWindow(at(iso), calendar);
  return [w.startMs, w.endMs, w.nextEndMs].map((ms) => new Date(ms).toISOString());
};
const berlinDay: Calendar = { unit: "day", timeZone: "Europe/Berlin" };

describe("calendar windows", () => {
  it("a Berlin day on the last Sunday of March has 23 hours (CET to CEST)", () => {
    expect(window("2026-03-29T12:00:00Z", berlinDay)).toEqual([
      "2026-03-28T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
      "2026-03-30T22:00:00.000Z",
    ]);
  });

  it("a Berlin day on the last Sunday of October has 25 hours (CEST to CET)", () => {
    expect(window("2026-10-25T12:00:00Z", berlinDay)).toEqual([
      "2026-10-24T22:00:00.000Z",
      "2026-10-25T23:00:00.000Z",
      "2026-10-26T23:00:00.000Z",
    ]);
  });

  it("the hour before and after the spring-forward gap belong to the same Berlin day", () => {
    const before = computeCalendarWindow(at("2026-03-29T00:59:59Z"), berlinDay);
    const after = computeCalendarWindow(at("2026-03-29T01:00:00Z"), berlinDay);
    expect(after).toEqual(before);
  });

  it("a Berlin month runs from the 1st 00:00 local to the next 1st, across the DST change", () => {
    expect(window("2026-03-15T12:00:00Z", { unit: "month", timeZone: "Europe/Berlin" })).toEqual([
      "2026-02-28T23:00:00.000Z",
      "2026-03-31T22:00:00.000Z",
      "2026-04-30T22:00:00.000Z",
    ]);
  });

  it("February has 29 days in a leap year and 28 otherwise", () => {
    const feb2028 = computeCalendarWindow(at("2028-02-29T12:00:00Z"), { unit: "month", timeZone: "UTC" });
    expect(feb2028.endMs - feb2028.startMs).toBe(29 * 86_400_000);
    expect(new Date(feb2028.startMs).toISOString()).toBe("2028-02-01T00:00:00.000Z");
    const feb2027 = computeCalendarWindow(at("2027-02-10T00:00:00Z"), { unit: "month", timeZone: "UTC" });
    expect(feb2027.endMs - feb2027.startMs).toBe(28 * 86_400_000);
  });

  it("months of 30 and 31 days end on the real last day", () => {
    const april = computeCalendarWindow(at("2026-04-30T23:59:59Z"), { unit: "month", timeZone: "UTC" });
    expect(new Date(april.endMs).toISOString()).toBe("2026-05-01T00:00:00.000Z");
    const may = computeCalendarWindow(at("2026-05-01T00:00:00Z"), { unit: "month", timeZone: "UTC" });
    expect(new Date(may.startMs).toISOString()).toBe("2026-05-01T00:00:00.000Z");
    expect(new Date(may.endMs).toISOString()).toBe("2026-06-01T00:00:00.000Z");
  });

  it("an ISO week starts on Monday, also across a year end (2027-01-01 is a Friday)", () => {
    expect(window("2027-01-01T12:00:00Z", { unit: "week", timeZone: "UTC" })).toEqual([
      "2026-12-28T00:00:00.000Z",
      "2027-01-04T00:00:00.000Z",
      "2027-01-11T00:00:00.000Z",
    ]);
    // A Sunday is the last day of its week, a Monday the first of the next.
    const sunday = computeCalendarWindow(at("2026-12-27T23:59:59Z"), { unit: "week", timeZone: "UTC" });
    expect(new Date(sunday.endMs).toISOString()).toBe("2026-12-28T00:00:00.000Z");
  });

  it("a year starts on January 1st 00:00 in its zone (Kiritimati is UTC+14)", () => {
    expect(window("2026-12-31T10:30:00Z", { unit: "year", timeZone: "Pacific/Kiritimati" })).toEqual([
      "2026-12-31T10:00:00.000Z",
      "2027-12-31T10:00:00.000Z",
      "2028-12-31T10:00:00.000Z",
    ]);
    expect(window("2028-06-01T00:00:00Z", { unit: "year", timeZone: "UTC" })[1]).toBe(
      "2029-01-01T00:00:00.000Z",
    );
  });

  it("a day whose midnight does not exist starts at the end of the DST gap (Santiago, 2026-09-06)", () => {
    // Chile moves clocks from 00:00 to 01:00 (UTC-4 to UTC-3) at the start of 2026-09-06.
    expect(window("2026-09-06T12:00:00Z", { unit: "day", timeZone: "America/Santiago" })).toEqual([
      "2026-09-06T04:00:00.000Z",
      "2026-09-07T03:00:00.000Z",
      "2026-09-08T03:00:00.000Z",
    ]);
  });

  it("the cached window equals the computed one and is replaced once time leaves it", () => {
    const cal: Calendar = { unit: "day", timeZone: "Asia/Kolkata" };
    const a = calendarWindow(at("2026-06-01T12:00:00Z"), cal);
    expect(a).toEqual(computeCalendarWindow(at("2026-06-01T12:00:00Z"), cal));
    expect(new Date(a.endMs).toISOString()).toBe("2026-06-01T18:30:00.000Z");
    const b = calendarWindow(a.endMs, cal);
    expect(b.startMs).toBe(a.endMs);
  });

  it("the deciding clock picks the end of the window it is in, within one window of the other clock", () => {
    const w = { startMs: 1000, endMs: 2000, nextEndMs: 3000 };
    expect(pickWindowEnd(999, w)).toBe(1000);
    expect(pickWindowEnd(1000, w)).toBe(2000);
    expect(pickWindowEnd(1999, w)).toBe(2000);
    expect(pickWindowEnd(2000, w)).toBe(3000);
    expect(pickWindowEnd(3000, w)).toBeUndefined();
  });

  it("knows IANA time zones and refuses unknown names", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Europe/Berlinn")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });
});
