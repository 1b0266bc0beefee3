/**
 * The Lua scripts of lua/ registered on an ioredis client with `defineCommand`: ioredis sends EVALSHA
 * and, on NOSCRIPT (after SCRIPT FLUSH, a restart or a failover to a fresh node), falls back to EVAL,
 * which loads the script again. Typed commands come from the module augmentation below.
 *
 * Wire contract (stated in each lua/*.lua header): KEYS = bucket keys of one slot; ARGV = per bucket
 * `cost, limit, periodMs, burst` flattened; reply = per bucket `allowed(0/1), remaining, retryAfterMs,
 * resetAfterMs` flattened, integers only.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Cluster, Redis, Result } from "ioredis";
import type { Algorithm } from "../../engine/types.js";
import type { Outcome, Take } from "../store.js";

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** lua/gcra.lua: charge GCRA buckets of one slot all-or-nothing. */
    tollgateGcra(numKeys: number, ...args: (string | number)[]): Result<number[], Context>;
    /** lua/fixed_window.lua: charge fixed-window counters of one slot all-or-nothing. */
    tollgateFixedWindow(numKeys: number, ...args: (string | number)[]): Result<number[], Context>;
    /** lua/refund.lua: give tokens back to buckets of one slot. */
    tollgateRefund(numKeys: number, ...args: (string | number)[]): Result<unknown, Context>;
  }
}

/** Directory of the .lua files: `<package root>/lua` (three levels above src/store/redis or dist/store/redis). */
export const DEFAULT_SCRIPTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "lua");

/** Register every tollgate script on a client (single node or cluster). */
export function defineScripts(client: Redis | Cluster, dir: string = DEFAULT_SCRIPTS_DIR): void {
  const load = (file: string) => readFileSync(join(dir, file), "utf8");
  client.defineCommand("tollgateGcra", { lua: load("gcra.lua") });
  client.defineCommand("tollgateFixedWindow", { lua: load("fixed_window.lua") });
  client.defineCommand("tollgateRefund", { lua: load("refund.lua") });
}

/** KEYS and ARGV of one script call over `takes` (all of one algorithm and one slot). */
export function encodeTakes(takes: readonly Take[]): { keys: string[]; argv: number[] } {
  const keys: string[] = [];
  const argv: number[] = [];
  for (const t of takes) {
    keys.push(t.key);
    argv.push(t.cost, t.policy.limit, t.policy.periodMs, t.policy.burst);
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
  const out: Outcome[] = [];
  for (let i = 0; i < count; i++) {
    const [allowed, remaining, retryAfterMs, resetAfterMs] = reply.slice(i * 4, i * 4 + 4).map(Number);
    out.push({
      allowed: allowed === 1,
      remaining: remaining ?? 0,
      retryAfterMs: retryAfterMs ?? 0,
      resetAfterMs: resetAfterMs ?? 0,
    });
  }
  return out;
}

/** Run the take script of `algorithm` over one slot's takes. */
export async function runTake(client: Redis | Cluster, algorithm: Algorithm, takes: readonly Take[]) {
  const { keys, argv } = encodeTakes(takes);
  const reply =
    algorithm === "gcra"
      ? await client.tollgateGcra(keys.length, ...keys, ...argv)
      : await client.tollgateFixedWindow(keys.length, ...keys, ...argv);
  return decodeOutcomes(reply, takes.length);
}

/** Give `cost` tokens back to each bucket of one slot (compensation of a partially denied call). */
export async function runRefund(client: Redis | Cluster, takes: readonly Take[]): Promise<void> {
  const keys: string[] = [];
  const argv: (string | number)[] = [];
  for (const t of takes) {
    keys.push(t.key);
    argv.push(t.policy.algorithm, t.cost, t.policy.limit, t.policy.periodMs, t.policy.burst);
  }
  await client.tollgateRefund(keys.length, ...keys, ...argv);
}
