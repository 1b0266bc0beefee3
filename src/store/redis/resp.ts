/**
 * RESP written by tollgate for the one command whose encoding is on the hot path: the merged take
 * call's EVALSHA (scripts.ts). Byte-identical to what ioredis writes for the same arguments.
 */
import { Command } from "ioredis";
import type { Calendar } from "../../engine/calendar.js";
import { utf8Length } from "../../utf8.js";
import { calendarArg } from "./calendar-argv.js";
import {
  bulkSize,
  calendarPolicyArgs,
  digits,
  numberBulkSize,
  plainInteger,
  policyArgs,
  writeAscii,
  writeNumberBulk,
  writeStringBulk,
} from "./resp-bulk.js";

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
    /** A compiled policy's argument bytes (`Policy.resp`). */
    readonly resp?: string | undefined;
  };
}

/**
 * A take's `limit, periodMs, burst, maxDebt` as RESP bulk strings, one char per byte: a compiled
 * policy's from compile time (`Policy.resp`, config/hot-path.ts), a calendar window's for the window
 * of `nowMs` (it moves with time), a request-supplied override's written now.
 */
function policyArgsOf(p: EncodableTake["policy"], nowMs: number): string {
  if (p.calendar !== undefined) return calendarPolicyArgs(p, calendarArg(p.calendar, nowMs));
  return p.resp ?? policyArgs(p);
}

/**
 * The EVALSHA of one lua/batch.lua call over `calls`, written straight from the takes: the bytes of
 * `encodeEvalsha(sha, encodeBatch(calls))` (a test compares them) without building the ~15-argument
 * list per request first. Arguments: key count, keys, call count, each call's key count, then per
 * take `cost, limit, periodMs, burst, maxDebt`.
 */
export function encodeBatchEvalsha(sha: string, calls: readonly (readonly EncodableTake[])[]): Buffer {
  // One now for both passes: a calendar window's arguments are the same text in each.
  const nowMs = Date.now();
  let keys = 0;
  let size = 0;
  for (const takes of calls) {
    size += numberBulkSize(takes.length);
    for (const t of takes) {
      keys++;
      size += bulkSize(utf8Length(t.key)) + numberBulkSize(t.cost) + policyArgsOf(t.policy, nowMs).length;
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
      pos = writeAscii(buf, pos, policyArgsOf(t.policy, nowMs));
    }
  if (pos !== total) throw new Error(`EVALSHA encoder wrote ${pos} of ${total} bytes`);
  return buf;
}
