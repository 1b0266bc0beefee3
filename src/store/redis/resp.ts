/**
 * RESP written by tollgate for the one command whose encoding is on the hot path: the merged take
 * call's EVALSHA (scripts.ts). Byte-identical to what ioredis writes for the same arguments.
 */
import { Command } from "ioredis";
import { utf8Length } from "../../utf8.js";

/**
 * An EVALSHA whose RESP bytes are written here, in one buffer: a merged call carries ~15 arguments per
 * request, and ioredis' generic path (flattening the argument list, stringifying numbers, measuring
 * and concatenating each argument into one string, then UTF-8 encoding it) was ~9% of a decision's
 * CPU on one node (bench/RESULTS.md). The reply is parsed and delivered by ioredis as for any command.
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
    total += 1 + digits(n) + 2 + n + 2;
  }
  const buf = Buffer.allocUnsafe(total);
  let pos = writeAscii(buf, 0, head);
  for (let i = 0; i < args.length; i++) {
    const n = sizes[i] as number;
    pos = writeBulkHeader(buf, pos, n);
    const text = texts[i];
    if (text === undefined) pos = writeDigits(buf, pos, args[i] as number, n);
    else pos += buf.write(text, pos, n === text.length ? "latin1" : "utf8");
    buf[pos++] = 13;
    buf[pos++] = 10;
  }
  if (pos !== total) throw new Error(`EVALSHA encoder wrote ${pos} of ${total} bytes`);
  return buf;
}
