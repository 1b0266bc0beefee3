/**
 * How a calendar window reaches lua/fixed_window.lua. The script keeps Redis `TIME` as its only
 * clock; what it cannot compute is a time zone's calendar (Lua in Redis has no tz database). So the
 * take's `periodMs` slot carries 0 and its `burst` slot (unused by fixed windows) the text
 * `start:end:nextEnd` — the window containing this process' now and the end of the one after
 * (engine/calendar.ts). The script picks the end of the window `TIME` is in: `start` when Redis is
 * behind this process across a boundary, `end`, or `nextEnd` when Redis is ahead; when `TIME` is
 * outside all of them (clocks more than a window — at least 23 hours — apart) the call fails.
 */
import { type Calendar, calendarWindow } from "../../engine/calendar.js";
import type { Policy } from "../../engine/types.js";

/** The `periodMs` ARGV value that marks a calendar window. */
export const CALENDAR_PERIOD_ARG = 0;

/** The `start:end:nextEnd` ARGV text of `calendar` at `nowMs` (this process' clock). */
export function calendarArg(calendar: Calendar, nowMs: number = Date.now()): string {
  const w = calendarWindow(nowMs, calendar);
  return `${w.startMs}:${w.endMs}:${w.nextEndMs}`;
}

/** The `periodMs` and `burst` ARGV values of `policy` for a take script. */
export function windowArgs(policy: Policy): readonly [number, number | string] {
  return policy.calendar === undefined
    ? [policy.periodMs, policy.burst]
    : [CALENDAR_PERIOD_ARG, calendarArg(policy.calendar)];
}
