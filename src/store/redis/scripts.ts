/**
 * The Lua scripts of lua/ registered on an ioredis client with `defineCommand`: ioredis sends EVALSHA
 * and, on NOSCRIPT (after SCRIPT FLUSH, a restart or a failover to a fresh node), falls back to EVAL,
 * which loads the script again. Typed commands come from the module augmentation below.
 *
 * Wire contract (stated in each lua/*.lua header): KEYS = bucket keys of one slot; ARGV = per bucket
 * `cost, limit, periodMs, burst, maxDebt` flattened (maxDebt -1: not an overdraft bucket); reply = per bucket `allowed(0/1), remaining, retryAfterMs,
 * resetAfterMs` flattened, integers only.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChainableCommander, Cluster, Redis, Result } from "ioredis";
import type { Algorithm } from "../../engine/types.js";
import type { Grant } from "../lease/backend.js";
import type { Outcome, Take } from "../store.js";
import { windowArgs } from "./calendar-argv.js";
import { EncodedCommand, encodeBatchEvalsha } from "./resp.js";

/** The scripts of lua/ by command-name stem. */
const SCRIPTS = {
  tollgateGcra: "gcra.lua",
  tollgateFixedWindow: "fixed_window.lua",
  tollgateRefund: "refund.lua",
  tollgateLease: "lease.lua",
} as const;

// Every script command takes its key count first (EVALSHA's own layout), except `tollgateLease1`.
// ioredis Cluster's auto-pipeline routes a command by its *first argument*: a leading key count would
// route every call by the slot of "3". So in a cluster the merged take calls are commands that carry
// their slot (`batchCommand`, cluster-batches.ts), and other script calls travel in explicit
// pipelines, which route each command by its real keys (EVALSHA's key positions); the lease script
// keeps a fixed `numberOfKeys` of 1 (its first argument
// is its key) and rides the auto-pipeline. Few commands are defined on purpose: ioredis copies every
// defined command onto each Pipeline it builds (auto-pipelines included), and the 66 fixed-key-count
// commands defined before merged calls were ~7% of the cluster profile (bench/history/2026-12.md).
declare module "ioredis" {
  interface RedisCommander<Context> {
    /** gcra.lua / fixed_window.lua / refund.lua / lease.lua: key count, keys, argv. */
    tollgateGcra: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateFixedWindow: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateRefund: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateLease: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    /** lua/batch.lua around gcra.lua / fixed_window.lua: key count, keys, argv. */
    tollgateGcraBatch: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateFixedWindowBatch: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    /** lua/lease.lua with its one key first (cluster): key, argv. */
    tollgateLease1: (...keyThenArgv: (string | number)[]) => Result<unknown, Context>;
  }
}

/**
 * The merged-call commands: on a single node sent as soon as the batcher flushes, outside ioredis'
 * auto-pipeline, which would hold them one more event-loop turn (see client.ts).
 */
export const BATCH_COMMANDS = ["tollgateGcraBatch", "tollgateFixedWindowBatch"] as const;

/**
 * `lua/batch.lua` with `body` (the text of gcra.lua or fixed_window.lua) as its per-call function;
 * `writeBack` (GCRA: it reads with GET and writes with SET .. PXAT only) routes the body's commands
 * through the batch's write-back table, so each key is read and written once per batch.
 */
export function batchLua(wrapper: string, body: string, writeBack: boolean): string {
  for (const line of ["\n--@CALL@\n", "\n--@REDIS@\n"])
    if (!wrapper.includes(line)) throw new Error(`batch.lua lacks its ${line.trim()} line`);
  return wrapper
    .replace("\n--@REDIS@\n", writeBack ? "\nlocal redis = write_back\n" : "\n")
    .replace("\n--@CALL@\n", () => `\n${body}\n`);
}

export const isNoScript = (err: unknown): boolean =>
  err instanceof Error && err.message.startsWith("NOSCRIPT");

/** Directory of the .lua files: `<package root>/lua` (three levels above src/store/redis or dist/store/redis). */
export const DEFAULT_SCRIPTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "lua");

/**
 * The tollgate scripts registered on one client. Script bodies are read once at construction (a
 * missing file fails startup, not a request), and every command is defined then too.
 */
export class Scripts {
  readonly #client: Redis | Cluster;
  readonly #cluster: boolean;
  /** SHA1 of each merged-call script, for the EVALSHA written by hand (single node). */
  readonly #batchSha: Readonly<Record<Algorithm, string>>;

  /** `cluster`: route script calls through explicit pipelines (see above). */
  constructor(client: Redis | Cluster, dir: string = DEFAULT_SCRIPTS_DIR, cluster = true) {
    this.#client = client;
    this.#cluster = cluster;
    const load = (file: string) => readFileSync(join(dir, file), "utf8");
    const gcra = load(SCRIPTS.tollgateGcra);
    const fixedWindow = load(SCRIPTS.tollgateFixedWindow);
    const lease = load(SCRIPTS.tollgateLease);
    const wrapper = load("batch.lua");
    // Define every command up front. ioredis' auto-pipelining builds a Pipeline per node and tick
    // from the commands the client has *then*; a command defined later (say on the first call under
    // load) is missing on a pending Pipeline, the queuing throws, and the pipeline's callbacks
    // shift out of alignment: "results[i] is not iterable", an uncaught exception (redis/ioredis#1931).
    client.defineCommand("tollgateGcra", { lua: gcra });
    client.defineCommand("tollgateFixedWindow", { lua: fixedWindow });
    client.defineCommand("tollgateRefund", { lua: load(SCRIPTS.tollgateRefund) });
    const gcraBatch = batchLua(wrapper, gcra, true);
    const fixedWindowBatch = batchLua(wrapper, fixedWindow, false);
    client.defineCommand("tollgateGcraBatch", { lua: gcraBatch });
    client.defineCommand("tollgateFixedWindowBatch", { lua: fixedWindowBatch });
    const sha1 = (lua: string) => createHash("sha1").update(lua).digest("hex");
    this.#batchSha = { gcra: sha1(gcraBatch), fixed_window: sha1(fixedWindowBatch) };
    if (cluster) client.defineCommand("tollgateLease1", { lua: lease, numberOfKeys: 1 });
    else client.defineCommand("tollgateLease", { lua: lease });
  }

  /** Run the take script of `algorithm` over one slot's takes. */
  async take(algorithm: Algorithm, takes: readonly Take[]): Promise<Outcome[]> {
    const { keys, argv } = encodeTakes(takes);
    const args = [keys.length, ...keys, ...argv];
    const reply = this.#cluster
      ? await this.#alone((p) =>
          algorithm === "gcra" ? p.tollgateGcra(...args) : p.tollgateFixedWindow(...args),
        )
      : await (algorithm === "gcra"
          ? this.#client.tollgateGcra(...args)
          : this.#client.tollgateFixedWindow(...args));
    return decodeOutcomes(reply, takes.length);
  }

  /**
   * Run several take calls of `algorithm` in one script call (lua/batch.lua), sent at once: one
   * outcome list per call, in order. In a cluster it goes in a pipeline of its own, as the defined
   * command (loading the script on NOSCRIPT, or a resend: see cluster-batches.ts); a turn's merged
   * calls go as `batchCommand`s.
   */
  async takeBatch(algorithm: Algorithm, calls: readonly (readonly Take[])[]): Promise<(Outcome[] | Error)[]> {
    if (this.#cluster)
      return decodeBatch(await this.#alone((p) => this.queueBatch(p, algorithm, calls)), calls);
    const command = new EncodedCommand(encodeBatchEvalsha(this.#batchSha[algorithm], calls));
    let reply: unknown;
    try {
      void this.#client.sendCommand(command);
      reply = await command.promise;
    } catch (err) {
      // Not loaded on this server (first call, SCRIPT FLUSH, restart, failover): ioredis' defined
      // command sends EVAL with the script text, which loads it, and EVALSHA works again after.
      if (!isNoScript(err)) throw err;
      const args = encodeBatch(calls);
      reply = await (algorithm === "gcra"
        ? this.#client.tollgateGcraBatch(...args)
        : this.#client.tollgateFixedWindowBatch(...args));
    }
    return decodeBatch(reply, calls);
  }

  /**
   * The merged call of `calls` (keys of `slot`) as one EVALSHA written by hand, for a cluster client
   * to route (cluster-batches.ts). The server answers NOSCRIPT until `takeBatch` has loaded it.
   */
  batchCommand(algorithm: Algorithm, calls: readonly (readonly Take[])[], slot: number): EncodedCommand {
    return new EncodedCommand(encodeBatchEvalsha(this.#batchSha[algorithm], calls), slot);
  }

  /** Queue the merged call of `calls` on `pipeline` (a cluster resend: routed by its keys). */
  queueBatch(pipeline: ChainableCommander, algorithm: Algorithm, calls: readonly (readonly Take[])[]): void {
    if (algorithm === "gcra") pipeline.tollgateGcraBatch(...encodeBatch(calls));
    else pipeline.tollgateFixedWindowBatch(...encodeBatch(calls));
  }

  /** Give `cost` tokens back to each bucket of one slot (compensation, lease returns). */
  async refund(takes: readonly Take[]): Promise<void> {
    const keys: string[] = [];
    const argv: (string | number)[] = [];
    for (const t of takes) {
      keys.push(t.key);
      argv.push(t.policy.algorithm, t.cost, t.policy.limit, t.policy.periodMs, t.policy.burst);
    }
    const args = [keys.length, ...keys, ...argv];
    if (this.#cluster) await this.#alone((p) => p.tollgateRefund(...args));
    else await this.#client.tollgateRefund(...args);
  }

  /** Take up to `take.cost` tokens of one bucket for a local lease (lua/lease.lua). */
  async lease(take: Take): Promise<Grant> {
    const { policy } = take;
    const args = [take.key, take.cost, policy.limit, policy.periodMs, policy.burst, policy.algorithm];
    const reply = this.#cluster
      ? await this.#client.tollgateLease1(...args)
      : await this.#client.tollgateLease(1, ...args);
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error("lease script reply is not 3 integers");
    const [granted = 0, remaining = 0, resetAfterMs = 0] = reply.map(Number);
    return { granted, remaining, resetAfterMs };
  }

  /** One command in its own explicit pipeline (cluster routing by its keys): its reply or error. */
  async #alone(queue: (pipeline: ChainableCommander) => unknown): Promise<unknown> {
    const pipeline = (this.#client as Cluster).pipeline();
    queue(pipeline);
    const [result] = (await pipeline.exec()) ?? [];
    if (!result) throw new Error("pipeline lost its reply");
    const [err, reply] = result;
    if (err) throw err;
    return reply;
  }
}

/** Arguments of one lua/batch.lua call over `calls`: key count, keys, call count, key counts, ARGV. */
export function encodeBatch(calls: readonly (readonly Take[])[]): (string | number)[] {
  const keys: string[] = [];
  const counts: number[] = [];
  const argv: (number | string)[] = [];
  for (const takes of calls) {
    counts.push(takes.length);
    for (const t of takes) {
      keys.push(t.key);
      const [periodMs, burst] = windowArgs(t.policy);
      argv.push(t.cost, t.policy.limit, periodMs, burst, t.policy.maxDebt ?? -1);
    }
  }
  return [keys.length, ...keys, calls.length, ...counts, ...argv];
}

/** A call of a merged script call that failed alone (lua/batch.lua reports its message). */
export class BatchCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReplyError";
  }
}

/**
 * Split the flat reply of a lua/batch.lua call into one outcome list per call, or the error of a call
 * that failed alone (its first slot holds the message as a string).
 */
export function decodeBatch(reply: unknown, calls: readonly (readonly Take[])[]): (Outcome[] | Error)[] {
  let total = 0;
  for (const takes of calls) total += takes.length;
  if (!Array.isArray(reply) || reply.length !== total * 4) {
    throw new Error(
      `script reply has ${Array.isArray(reply) ? reply.length : typeof reply} items, expected ${total * 4}`,
    );
  }
  const out: (Outcome[] | Error)[] = new Array(calls.length);
  let at = 0;
  for (let i = 0; i < calls.length; i++) {
    const n = (calls[i] as readonly Take[]).length;
    const first = reply[at * 4];
    out[i] =
      typeof first === "string" || Buffer.isBuffer(first)
        ? new BatchCallError(String(first))
        : outcomesAt(reply, at * 4, n);
    at += n;
  }
  return out;
}

/** `count` outcomes from the flat integer reply, starting at item `from`. */
function outcomesAt(reply: readonly unknown[], from: number, count: number): Outcome[] {
  const out: Outcome[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = from + i * 4;
    out[i] = {
      allowed: Number(reply[at]) === 1,
      remaining: Number(reply[at + 1]),
      retryAfterMs: Number(reply[at + 2]),
      resetAfterMs: Number(reply[at + 3]),
    };
  }
  return out;
}

/** KEYS and ARGV of one script call over `takes` (all of one algorithm and one slot). */
export function encodeTakes(takes: readonly Take[]): { keys: string[]; argv: (number | string)[] } {
  const keys: string[] = [];
  const argv: (number | string)[] = [];
  for (const t of takes) {
    keys.push(t.key);
    const [periodMs, burst] = windowArgs(t.policy);
    argv.push(t.cost, t.policy.limit, periodMs, burst, t.policy.maxDebt ?? -1);
  }
  return { keys, argv };
}

/** Decode the flattened integer reply of a take script into one Outcome per Take. */
export function decodeOutcomes(reply: unknown, count: number): Outcome[] {
  if (!Array.isArray(reply) || reply.length !== count * 4) {
    throw new Error(
      `script reply has ${Array.isArray(reply) ? reply.length : typeof reply} items, expected ${count * 4}`,
    );
  }
  return outcomesAt(reply, 0, count);
}
