/**
 * RESP written by tollgate for the one command whose encoding is on the hot path: the merged take
 * call's EVALSHA (scripts.ts). Byte-identical to what ioredis writes for the same arguments.
 */
import { Command } from "ioredis";
import type { Calendar } from "../../engine/calendar.js";
import { utf8Length } from "../../utf8.js";
import { CALENDAR_PERIOD_ARG, calendarArg } from "./calendar-argv.js";

/**
 * An EVALSHA whose RESP bytes are written here, in one buffer: a merged call carries ~15 arguments per
 * request, and ioredis' generic path (flattening the argument list, stringifying numbers, measuring
 * and concatenating each argument into one string, then UTF-8 encoding it) cost twice as much
 * client CPU (docs/decisions/resp-writer.md). The reply is parsed and delivered by ioredis as for any command.
 */
export class EncodedCommand extends Command {
  readonly #bytes: Buffer;
  readonly #slot: number;

  /**
   * `slot`: the cluster slot of every key (a Redis Cluster client routes the command by it and
   * follows MOVED, ASK and TRYAGAIN as for its own commands); -1 on a single node.
   */
  constructor(bytes: Buffer, slot = -1) {
    super("evalsha", []);
    this.#bytes = bytes;
    this.#slot = slot;
  }

  override toWritable(): Buffer {
    return this.#bytes;
  }

  // ioredis would find the slot from the arguments, which this command does not keep.
  override getSlot(): number {
    return this.#slot;
  }
}

function writeAscii(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + text.length;
}

/** Decimal digits of a non-negative safe integer. */
function digits(n: number): number {
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

const plainInteger = (a: string | number): a is number =>
  typeof a === "number" && Number.isSafeInteger(a) && a >= 0;

/** Bytes of a RESP bulk string of `n` bytes: `$<n>\r\n<bytes>\r\n`. */
const bulkSize = (n: number): number => 1 + digits(n) + 2 + n + 2;

/** Bytes of the RESP bulk string of a number (its decimal text). */
const numberBulkSize = (n: number): number => bulkSize(plainInteger(n) ? digits(n) : String(n).length);

function writeNumberBulk(buf: Buffer, pos: number, n: number): number {
  if (!plainInteger(n)) return writeStringBulk(buf, pos, String(n));
  const d = digits(n);
  pos = writeBulkHeader(buf, pos, d);
  pos = writeDigits(buf, pos, n, d);
  buf[pos++] = 13;
  buf[pos++] = 10;
  return pos;
}

function writeStringBulk(buf: Buffer, pos: number, text: string, n = utf8Length(text)): number {
  pos = writeBulkHeader(buf, pos, n);
  pos += buf.write(text, pos, n === text.length ? "latin1" : "utf8");
  buf[pos++] = 13;
  buf[pos++] = 10;
  return pos;
}

/**
 * Command buffers are cut from a shared slab, as Node's own Buffer pool does for small buffers: a
 * merged call's EVALSHA is tens of KB, above that pool's limit, and allocating (then collecting) an
 * ArrayBuffer per call showed in the profile. A slice is never written again once handed out, so a
 * socket write still holding one is safe; a full slab is left to the collector once its last slice is.
 */
const SLAB_BYTES = 1 << 20;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

function commandBuffer(size: number): Buffer {
  if (size > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(size);
  if (slabUsed + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const buf = slab.subarray(slabUsed, slabUsed + size);
  slabUsed = (slabUsed + size + 7) & ~7;
  return buf;
}

/**
 * `EVALSHA sha args...` as a RESP array of bulk strings, numbers as their decimal text (the bytes
 * ioredis writes for the same command; a test compares them). Sizes first, then one write pass.
 */
export function encodeEvalsha(sha: string, args: readonly (string | number)[]): Buffer {
  const texts: (string | undefined)[] = new Array(args.length);
  const sizes: number[] = new Array(args.length);
  const head = `*${args.length + 2}\r\n$7\r\nevalsha\r\n$${sha.length}\r\n${sha}\r\n`;
  let total = head.length;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string | number;
    let n: number;
    if (plainInteger(a)) n = digits(a);
    else {
      const text = typeof a === "string" ? a : String(a);
      texts[i] = text;
      n = utf8Length(text);
    }
    sizes[i] = n;
    total += bulkSize(n);
  }
  const buf = commandBuffer(total);
  let pos = writeAscii(buf, 0, head);
  for (let i = 0; i < args.length; i++) {
    const text = texts[i];
    pos =
      text === undefined
        ? writeNumberBulk(buf, pos, args[i] as number)
        : writeStringBulk(buf, pos, text, sizes[i] as number);
  }
  if (pos !== total) throw new Error(`EVALSHA encoder wrote ${pos} of ${total} bytes`);
  return buf;
}

/** What the merged-call encoder needs of a take (store.ts `Take`). */
export interface EncodableTake {
  readonly key: string;
  readonly cost: number;
  readonly policy: {
    readonly limit: number;
    readonly periodMs: number;
    readonly burst: number;
    readonly calendar?: Calendar;
    readonly maxDebt?: number;
  };
}

/** What the merged-call encoder writes for each take's policy: `limit, periodMs, burst, maxDebt`. */
type EncodablePolicy = EncodableTake["policy"];

/**
 * The bulk strings of a policy's `limit, periodMs, burst, maxDebt` (-1: not an overdraft bucket),
 * written once per policy object: a
 * policy comes from the compiled config (frozen, the same object for every request of its rule), so
 * each take copies these bytes instead of measuring and writing three numbers again (the encoder's
 * number work was most of its ~4% of CPU per decision in the bench profile). Per-request policies
 * (a request's limit override) are written once and dropped with their object.
 */
const policyBulks = new WeakMap<EncodablePolicy, Buffer>();

/**
 * A calendar policy's bytes change with its window (calendar-argv.ts): `refresh` (the sizing pass)
 * rebuilds them when the window moved; the writing pass reuses exactly what the sizing pass measured.
 */
function policyBytes(p: EncodablePolicy, refresh: boolean): Buffer {
  if (p.calendar !== undefined) return calendarPolicyBytes(p, p.calendar, refresh);
  let bytes = policyBulks.get(p);
  if (bytes === undefined) {
    const maxDebt = p.maxDebt ?? -1;
    bytes = Buffer.allocUnsafe(
      numberBulkSize(p.limit) +
        numberBulkSize(p.periodMs) +
        numberBulkSize(p.burst) +
        numberBulkSize(maxDebt),
    );
    let pos = writeNumberBulk(bytes, 0, p.limit);
    pos = writeNumberBulk(bytes, pos, p.periodMs);
    pos = writeNumberBulk(bytes, pos, p.burst);
    writeNumberBulk(bytes, pos, maxDebt);
    policyBulks.set(p, bytes);
  }
  return bytes;
}

const calendarBulks = new WeakMap<EncodablePolicy, { readonly arg: string; readonly bytes: Buffer }>();

function calendarPolicyBytes(p: EncodablePolicy, calendar: Calendar, refresh: boolean): Buffer {
  const cached = calendarBulks.get(p);
  if (cached !== undefined && !refresh) return cached.bytes;
  const arg = calendarArg(calendar);
  if (cached !== undefined && cached.arg === arg) return cached.bytes;
  const maxDebt = p.maxDebt ?? -1;
  const bytes = Buffer.allocUnsafe(
    numberBulkSize(p.limit) +
      numberBulkSize(CALENDAR_PERIOD_ARG) +
      bulkSize(arg.length) +
      numberBulkSize(maxDebt),
  );
  let pos = writeNumberBulk(bytes, 0, p.limit);
  pos = writeNumberBulk(bytes, pos, CALENDAR_PERIOD_ARG);
  pos = writeStringBulk(bytes, pos, arg);
  writeNumberBulk(bytes, pos, maxDebt);
  calendarBulks.set(p, { arg, bytes });
  return bytes;
}

/**
 * The EVALSHA of one lua/batch.lua call over `calls`, written straight from the takes: the bytes of
 * `encodeEvalsha(sha, encodeBatch(calls))` (a test compares them) without building the ~15-argument
 * list per request first. Arguments: key count, keys, call count, each call's key count, then per
 * take `cost, limit, periodMs, burst, maxDebt`.
 */
export function encodeBatchEvalsha(sha: string, calls: readonly (readonly EncodableTake[])[]): Buffer {
  let keys = 0;
  let size = 0;
  for (const takes of calls) {
    size += numberBulkSize(takes.length);
    for (const t of takes) {
      keys++;
      size += bulkSize(utf8Length(t.key));
      size += numberBulkSize(t.cost) + policyBytes(t.policy, true).length;
    }
  }
  const head = `*${6 * keys + calls.length + 4}\r\n$7\r\nevalsha\r\n$${sha.length}\r\n${sha}\r\n`;
  const total = head.length + numberBulkSize(keys) + numberBulkSize(calls.length) + size;
  const buf = commandBuffer(total);
  let pos = writeAscii(buf, 0, head);
  pos = writeNumberBulk(buf, pos, keys);
  for (const takes of calls) for (const t of takes) pos = writeStringBulk(buf, pos, t.key);
  pos = writeNumberBulk(buf, pos, calls.length);
  for (const takes of calls) pos = writeNumberBulk(buf, pos, takes.length);
  for (const takes of calls)
    for (const t of takes) {
      pos = writeNumberBulk(buf, pos, t.cost);
      const policy = policyBytes(t.policy, false);
      buf.set(policy, pos);
      pos += policy.length;
    }
  if (pos !== total) throw new Error(`EVALSHA encoder wrote ${pos} of ${total} bytes`);
  return buf;
}
