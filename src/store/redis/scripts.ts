/**
 * The Lua scripts of lua/, sent through one `ScriptRunner` (script-runner.ts: EVALSHA written by
 * tollgate, routed by slot in a cluster, NOSCRIPT recovered there and only there).
 *
 * Wire contract (stated in each lua/*.lua header): KEYS = bucket keys of one slot; ARGV = per bucket
 * `cost, limit, periodMs, burst, maxDebt` flattened (maxDebt -1: not an overdraft bucket); reply = per bucket `allowed(0/1), remaining, retryAfterMs,
 * resetAfterMs` flattened, integers only.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Algorithm } from "../../engine/types.js";
import type { Grant } from "../lease/backend.js";
import type { Outcome, Take } from "../store.js";
import { windowArgs } from "./calendar-argv.js";
import { encodeBatchEvalsha } from "./resp.js";
import { type Script, type ScriptRunner, scriptOf } from "./script-runner.js";

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

/** Directory of the .lua files: `<package root>/lua` (three levels above src/store/redis or dist/store/redis). */
export const DEFAULT_SCRIPTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "lua");

/** The tollgate scripts, read once at construction (a missing file fails startup, not a request). */
export class Scripts {
  readonly #runner: ScriptRunner;
  readonly #take: Readonly<Record<Algorithm, Script>>;
  /** lua/batch.lua around each take script (merged calls). */
  readonly #batch: Readonly<Record<Algorithm, Script>>;
  readonly #refund: Script;
  readonly #lease: Script;

  constructor(runner: ScriptRunner, dir: string = DEFAULT_SCRIPTS_DIR) {
    this.#runner = runner;
    const load = (file: string) => readFileSync(join(dir, file), "utf8");
    const gcra = load("gcra.lua");
    const fixedWindow = load("fixed_window.lua");
    const wrapper = load("batch.lua");
    this.#take = {
      gcra: scriptOf("gcra.lua", gcra),
      fixed_window: scriptOf("fixed_window.lua", fixedWindow),
    };
    this.#batch = {
      gcra: scriptOf("batch.lua(gcra.lua)", batchLua(wrapper, gcra, true)),
      fixed_window: scriptOf("batch.lua(fixed_window.lua)", batchLua(wrapper, fixedWindow, false)),
    };
    this.#refund = scriptOf("refund.lua", load("refund.lua"));
    this.#lease = scriptOf("lease.lua", load("lease.lua"));
  }

  /** Run the take script of `algorithm` over one slot's takes. */
  async take(algorithm: Algorithm, takes: readonly Take[]): Promise<Outcome[]> {
    const { keys, argv } = encodeTakes(takes);
    return decodeOutcomes(await this.#runner.run(this.#take[algorithm], keys, argv), takes.length);
  }

  /**
   * Run several take calls of `algorithm` (keys of `slot`, -1 on a single node) in one script call
   * (lua/batch.lua), its EVALSHA written straight from the takes (resp.ts): one outcome list per call,
   * in order, or the error a call alone failed with.
   */
  takeBatch(
    algorithm: Algorithm,
    calls: readonly (readonly Take[])[],
    slot = -1,
  ): Promise<(Outcome[] | Error)[]> {
    const script = this.#batch[algorithm];
    return this.#runner
      .runEncoded(script, encodeBatchEvalsha(script.sha, calls), slot)
      .then((reply) => decodeBatch(reply, calls));
  }

  /** Give `cost` tokens back to each bucket of one slot (compensation, lease returns). */
  async refund(takes: readonly Take[]): Promise<void> {
    const keys: string[] = [];
    const argv: (string | number)[] = [];
    for (const t of takes) {
      keys.push(t.key);
      argv.push(t.policy.algorithm, t.cost, t.policy.limit, t.policy.periodMs, t.policy.burst);
    }
    await this.#runner.run(this.#refund, keys, argv);
  }

  /** Take up to `take.cost` tokens of one bucket for a local lease (lua/lease.lua). */
  async lease(take: Take): Promise<Grant> {
    const { policy } = take;
    const args = [take.cost, policy.limit, policy.periodMs, policy.burst, policy.algorithm];
    const reply = await this.#runner.run(this.#lease, [take.key], args);
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error("lease script reply is not 3 integers");
    const [granted = 0, remaining = 0, resetAfterMs = 0] = reply.map(Number);
    return { granted, remaining, resetAfterMs };
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
