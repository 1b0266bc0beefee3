/**
 * Calendar windows (`calendar: true` on a `fixed_window` rule): a day starts at local midnight, a
 * week on Monday (ISO 8601), a month on the 1st and a year on January 1st, all at 00:00 in the
 * rule's IANA `time_zone`. Offsets come from `Intl.DateTimeFormat`, so DST changes (a 23- or 25-hour
 * day), month lengths and leap years follow the tz database of the running Node.js.
 *
 * One clock decides: a store computes, from its own idea of now, the current window's start, end and
 * the next window's end ({@link CalendarWindow}); the deciding clock (Redis `TIME` inside the script,
 * the injected clock on memory) then picks the end of the window it is in with
 * {@link pickWindowEnd}. The two clocks may differ by less than one window (≥ 23 hours).
 */
import type { Unit } from "./types.js";

/** Units a calendar window can have. */
export type CalendarUnit = Extract<Unit, "day" | "week" | "month" | "year">;

/** Units accepted with `calendar: true`. */
export const CALENDAR_UNITS: readonly CalendarUnit[] = Object.freeze(["day", "week", "month", "year"]);

/** The calendar of a policy: its unit and IANA time zone. */
export interface Calendar {
  readonly unit: CalendarUnit;
  /** IANA name, e.g. `Europe/Berlin`; `UTC` by default. */
  readonly timeZone: string;
}

/** The window containing a moment, plus the end of the window after it (epoch ms). */
export interface CalendarWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly nextEndMs: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when `name` is a time zone this Node.js knows (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isTimeZone(name: string): boolean {
  if (name === "") return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/** Local wall-clock fields of `ms` in `timeZone`, as the epoch ms those fields would be in UTC. */
function wallMs(ms: number, timeZone: string): number {
  const f: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(ms))
    if (p.type !== "literal") f[p.type] = Number(p.value);
  return Date.UTC(f.year ?? 1970, (f.month ?? 1) - 1, f.day ?? 1, f.hour ?? 0, f.minute ?? 0, f.second ?? 0);
}

const DAY_MS = 86_400_000;

/**
 * The first instant of local date `dayUtc` (that date's midnight as a UTC epoch ms): local midnight,
 * or when midnight does not exist (a DST gap at 00:00) the first instant after it.
 */
export function startOfLocalDay(dayUtc: number, timeZone: string): number {
  // Two rounds of "wall time minus offset" land on midnight unless a transition is next to it.
  let t = dayUtc - (wallMs(dayUtc, timeZone) - dayUtc);
  t = dayUtc - (wallMs(t, timeZone) - Math.floor(t / 1000) * 1000);
  if (wallMs(t, timeZone) === dayUtc && wallMs(t - 1000, timeZone) < dayUtc) return t;
  // Search the first second whose local date is dayUtc or later (offsets are within ±15 h).
  let lo = dayUtc - 15 * 3_600_000; // local date before dayUtc
  let hi = dayUtc + 15 * 3_600_000; // local date dayUtc or later
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallMs(mid, timeZone) >= dayUtc) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The local date (as a UTC midnight) starting the window of `unit` that contains local date `dayUtc`. */
function windowStartDay(dayUtc: number, unit: CalendarUnit, offset: number): number {
  const d = new Date(dayUtc);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (unit) {
    case "day":
      return dayUtc + offset * DAY_MS;
    case "week":
      // ISO 8601: weeks start on Monday (getUTCDay: Sunday 0 .. Saturday 6).
      return dayUtc - ((d.getUTCDay() + 6) % 7) * DAY_MS + offset * 7 * DAY_MS;
    case "month":
      return Date.UTC(y, m + offset, 1);
    case "year":
      return Date.UTC(y + offset, 0, 1);
  }
}

/** Compute the window of `calendar` that contains `nowMs` (no cache). */
export function computeCalendarWindow(nowMs: number, calendar: Calendar): CalendarWindow {
  const { unit, timeZone } = calendar;
  const wall = wallMs(nowMs, timeZone);
  const today = wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
  let startMs = startOfLocalDay(windowStartDay(today, unit, 0), timeZone);
  // A day whose midnight falls back to the day before (rare) could start after now: step back.
  if (startMs > nowMs) startMs = startOfLocalDay(windowStartDay(today - DAY_MS, unit, 0), timeZone);
  const endMs = startOfLocalDay(windowStartDay(today, unit, 1), timeZone);
  const nextEndMs = startOfLocalDay(windowStartDay(today, unit, 2), timeZone);
  return { startMs, endMs, nextEndMs };
}

const cache = new Map<string, CalendarWindow>();

/**
 * The window of `calendar` containing `nowMs`, cached per calendar while `nowMs` stays in it (a
 * window changes at most once a day, so `Intl` runs once per window, not per request).
 */
export function calendarWindow(nowMs: number, calendar: Calendar): CalendarWindow {
  const id = `${calendar.timeZone}\u0000${calendar.unit}`;
  const hit = cache.get(id);
  if (hit !== undefined && hit.startMs <= nowMs && nowMs < hit.endMs) return hit;
  const w = computeCalendarWindow(nowMs, calendar);
  if (cache.size > 1000) cache.clear();
  cache.set(id, w);
  return w;
}

/**
 * End of the window the deciding clock's `nowMs` is in, given the window computed from another
 * clock: `startMs` when that clock is ahead (now is in the window before), `endMs`, or `nextEndMs`
 * when it is behind; undefined when the clocks differ by more than a window. lua/fixed_window.lua
 * makes the same choice with Redis `TIME`.
 */
export function pickWindowEnd(nowMs: number, w: CalendarWindow): number | undefined {
  if (nowMs < w.startMs) return w.startMs;
  if (nowMs < w.endMs) return w.endMs;
  if (nowMs < w.nextEndMs) return w.nextEndMs;
  return undefined;
}
