/**
 * RESP bulk strings of numbers and text, and a take's policy arguments written with them: the pieces
 * of resp.ts that need no ioredis, so config/hot-path.ts can write a compiled policy's arguments once.
 */
import { utf8Length } from "../../utf8.js";
import { CALENDAR_PERIOD_ARG } from "./calendar-argv.js";

export function writeAscii(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + text.length;
}
/** Decimal digits of a non-negative safe integer. */
export function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** Write the non-negative safe integer `n` (`d` digits) at `pos`. */
function writeDigits(buf: Buffer, pos: number, n: number, d: number): number {
  for (let i = pos + d - 1; i >= pos; i--) {
    buf[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return pos + d;
}

/** `$<n>\r\n`: the header of a bulk string of `n` bytes. */
function writeBulkHeader(buf: Buffer, pos: number, n: number): number {
  buf[pos++] = 36; // $
  pos = writeDigits(buf, pos, n, digits(n));
  buf[pos++] = 13;
  buf[pos++] = 10;
  return pos;
}

export const plainInteger = (a: string | number): a is number =>
  typeof a === "number" && Number.isSafeInteger(a) && a >= 0;

/** Bytes of a RESP bulk string of `n` bytes: `$<n>\r\n<bytes>\r\n`. */
export const bulkSize = (n: number): number => 1 + digits(n) + 2 + n + 2;

/** Bytes of the RESP bulk string of a number (its decimal text). */
export const numberBulkSize = (n: number): number => bulkSize(plainInteger(n) ? digits(n) : String(n).length);

export function writeNumberBulk(buf: Buffer, pos: number, n: number): number {
  if (!plainInteger(n)) return writeStringBulk(buf, pos, String(n));
  const d = digits(n);
  pos = writeBulkHeader(buf, pos, d);
  pos = writeDigits(buf, pos, n, d);
  buf[pos++] = 13;
  buf[pos++] = 10;
  return pos;
}

export function writeStringBulk(buf: Buffer, pos: number, text: string, n = utf8Length(text)): number {
  pos = writeBulkHeader(buf, pos, n);
  pos += buf.write(text, pos, n === text.length ? "latin1" : "utf8");
  buf[pos++] = 13;
  buf[pos++] = 10;
  return pos;
}

/** What a take's policy arguments are written from. */
export interface PolicyTerms {
  readonly limit: number;
  readonly periodMs: number;
  readonly burst: number;
  /** -1 is sent when undefined (not an overdraft bucket). */
  readonly maxDebt?: number;
}

/**
 * Four take arguments as RESP bulk strings, one char per byte: `limit`, `period`, `burst` (a number,
 * or a calendar window's ASCII text), `maxDebt`.
 */
function fourArgs(limit: number, period: number, burst: number | string, maxDebt: number): string {
  const text = typeof burst === "string";
  const bytes = Buffer.allocUnsafe(
    numberBulkSize(limit) +
      numberBulkSize(period) +
      (text ? bulkSize(burst.length) : numberBulkSize(burst)) +
      numberBulkSize(maxDebt),
  );
  let pos = writeNumberBulk(bytes, 0, limit);
  pos = writeNumberBulk(bytes, pos, period);
  pos = text ? writeStringBulk(bytes, pos, burst) : writeNumberBulk(bytes, pos, burst);
  writeNumberBulk(bytes, pos, maxDebt);
  return bytes.toString("latin1");
}

/** `limit, periodMs, burst, maxDebt` (-1: not an overdraft bucket) as RESP bulk strings, one char per byte. */
export function policyArgs(p: PolicyTerms): string {
  return fourArgs(p.limit, p.periodMs, p.burst, p.maxDebt ?? -1);
}

/**
 * A calendar window's arguments (calendar-argv.ts): `limit`, the calendar marker in the `periodMs`
 * slot, the window text `arg` in the `burst` slot, `maxDebt`.
 */
export function calendarPolicyArgs(p: PolicyTerms, arg: string): string {
  return fourArgs(p.limit, CALENDAR_PERIOD_ARG, arg, p.maxDebt ?? -1);
}
