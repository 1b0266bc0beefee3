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
import type { ChainableCommander, Cluster, Redis, Result } from "ioredis";
import type { Algorithm } from "../../engine/types.js";
import type { Grant } from "../lease/backend.js";
import type { Outcome, Take } from "../store.js";

/** The scripts of lua/ by command-name stem. */
const SCRIPTS = {
  tollgateGcra: "gcra.lua",
  tollgateFixedWindow: "fixed_window.lua",
  tollgateRefund: "refund.lua",
  tollgateLease: "lease.lua",
} as const;
type ScriptName = keyof typeof SCRIPTS;

// In a cluster, one command per (script, number of keys), e.g. `tollgateGcra3`, defined with a fixed
// `numberOfKeys` so the first argument is a key. ioredis Cluster's auto-pipelining routes a command
// by its first argument; with a leading key count every script call would be routed by the slot of
// "3" and fail with "All keys in the pipeline should belong to the same slots allocation group".
// On one node (or Sentinel) nothing routes by key: one command per script, key count first
// (`tollgateGcra`), so calls of any size use EVALSHA.
declare module "ioredis" {
  interface RedisCommander<Context> {
    /** The scripts defined without `numberOfKeys` (single node): key count, keys, argv. */
    tollgateGcra: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateFixedWindow: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateRefund: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateLease: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    /** lua/batch.lua around gcra.lua / fixed_window.lua (single node): key count, keys, argv. */
    tollgateGcraBatch: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    tollgateFixedWindowBatch: (...countKeysThenArgv: (string | number)[]) => Result<unknown, Context>;
    /** lua/gcra.lua over N keys: charge GCRA buckets of one slot all-or-nothing. */
    [gcra: `tollgateGcra${number}`]: (...keysThenArgv: (string | number)[]) => Result<number[], Context>;
    /** lua/fixed_window.lua over N keys: charge fixed-window counters of one slot all-or-nothing. */
    [fixedWindow: `tollgateFixedWindow${number}`]: (
      ...keysThenArgv: (string | number)[]
    ) => Result<number[], Context>;
    /** lua/refund.lua over N keys: give tokens back to buckets of one slot. */
    [refund: `tollgateRefund${number}`]: (...keysThenArgv: (string | number)[]) => Result<unknown, Context>;
    /** lua/lease.lua over 1 key: grant up to N tokens of one bucket to a local lease. */
    [lease: `tollgateLease${number}`]: (...keysThenArgv: (string | number)[]) => Result<number[], Context>;
  }
}

/**
 * In a cluster, calls over up to this many keys (one slot group: one descriptor's limits of one
 * algorithm) use a defined (EVALSHA) command; larger ones use EVAL. Kept small on purpose: ioredis
 * copies every defined command onto each auto-pipeline it builds (one per node and flush), so 64 key
 * counts × 4 scripts cost more per flush than the script call itself (bench/RESULTS.md).
 */
export const MAX_DEFINED_KEYS = 16;

/**
 * The merged-call commands (single node): sent as soon as the batcher flushes, outside ioredis'
 * auto-pipeline, which would hold them one more event-loop turn (see client.ts).
 */
export const BATCH_COMMANDS = ["tollgateGcraBatch", "tollgateFixedWindowBatch"] as const;

/** `lua/batch.lua` with `body` (the text of gcra.lua or fixed_window.lua) as its per-call function. */
export function batchLua(wrapper: string, body: string): string {
  if (!wrapper.includes("\n--@CALL@\n")) throw new Error("batch.lua lacks its --@CALL@ line");
  return wrapper.replace("\n--@CALL@\n", () => `\n${body}\n`);
}

/** Directory of the .lua files: `<package root>/lua` (three levels above src/store/redis or dist/store/redis). */
export const DEFAULT_SCRIPTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "lua");

/**
 * The tollgate scripts registered on one client. Script bodies are read once at construction (a
 * missing file fails startup, not a request); commands for 1..MAX_DEFINED_KEYS keys are defined then too.
 */
export class Scripts {
  readonly #client: Redis | Cluster;
  readonly #lua: Readonly<Record<ScriptName, string>>;
  readonly #defined = new Set<string>();

  readonly #fixedKeys: boolean;

  /** `fixedKeys`: one command per key count (Redis Cluster, see above); else one per script. */
  constructor(client: Redis | Cluster, dir: string = DEFAULT_SCRIPTS_DIR, fixedKeys = true) {
    this.#client = client;
    this.#fixedKeys = fixedKeys;
    const load = (file: string) => readFileSync(join(dir, file), "utf8");
    this.#lua = {
      tollgateGcra: load(SCRIPTS.tollgateGcra),
      tollgateFixedWindow: load(SCRIPTS.tollgateFixedWindow),
      tollgateRefund: load(SCRIPTS.tollgateRefund),
      tollgateLease: load(SCRIPTS.tollgateLease),
    };
    // Define every command up front. ioredis' auto-pipelining builds a Pipeline per node and tick
    // from the commands the client has *then*; a command defined later (say the first 3-key GCRA call
    // under load) is missing on a pending Pipeline, the queuing throws, and the pipeline's callbacks
    // shift out of alignment: "results[i] is not iterable", an uncaught exception
    // (redis/ioredis#1931). Calls over more keys than this use the built-in EVAL instead.
    {
      // Both modes: a cluster sends these only inside explicit per-node pipelines, which route by
      // the real keys (the auto-pipeline would route by the first argument, the key count).
      const wrapper = load("batch.lua");
      this.#client.defineCommand("tollgateGcraBatch", { lua: batchLua(wrapper, this.#lua.tollgateGcra) });
      this.#client.defineCommand("tollgateFixedWindowBatch", {
        lua: batchLua(wrapper, this.#lua.tollgateFixedWindow),
      });
    }
    for (const script of Object.keys(SCRIPTS) as ScriptName[]) {
      if (!fixedKeys) {
        this.#client.defineCommand(script, { lua: this.#lua[script] });
        continue;
      }
      const most = script === "tollgateLease" ? 1 : MAX_DEFINED_KEYS;
      for (let keys = 1; keys <= most; keys++) {
        const name: `${ScriptName}${number}` = `${script}${keys}`;
        this.#client.defineCommand(name, { lua: this.#lua[script], numberOfKeys: keys });
        this.#defined.add(name);
      }
    }
  }

  /** Run the take script of `algorithm` over one slot's takes. */
  async take(algorithm: Algorithm, takes: readonly Take[]): Promise<Outcome[]> {
    const { keys, argv } = encodeTakes(takes);
    const script = algorithm === "gcra" ? "tollgateGcra" : "tollgateFixedWindow";
    const reply = await this.#command(script, keys.length)(...keys, ...argv);
    return decodeOutcomes(reply, takes.length);
  }

  /**
   * Run several take calls of `algorithm` in one script call (lua/batch.lua): one outcome list per
   * call, in order. On a single node it is sent at once; in a cluster, queued on `pipeline` (one per
   * node, see RedisStore), whose exec() result `decodeBatch` reads.
   */
  async takeBatch(algorithm: Algorithm, calls: readonly (readonly Take[])[]): Promise<Outcome[][]> {
    const command =
      algorithm === "gcra" ? this.#client.tollgateGcraBatch : this.#client.tollgateFixedWindowBatch;
    return decodeBatch(await command.call(this.#client, ...encodeBatch(calls)), calls);
  }

  /** Queue the merged call of `calls` on `pipeline` (cluster: one pipeline per node and turn). */
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
    await this.#command("tollgateRefund", keys.length)(...keys, ...argv);
  }

  /** Take up to `take.cost` tokens of one bucket for a local lease (lua/lease.lua). */
  async lease(take: Take): Promise<Grant> {
    const { policy } = take;
    const reply = await this.#command("tollgateLease", 1)(
      take.key,
      take.cost,
      policy.limit,
      policy.periodMs,
      policy.burst,
      policy.algorithm,
    );
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error("lease script reply is not 3 integers");
    const [granted = 0, remaining = 0, resetAfterMs = 0] = reply.map(Number);
    return { granted, remaining, resetAfterMs };
  }

  /** The command running `script` over `keys` keys, defined on first use. */
  #command(script: ScriptName, keys: number): (...keysThenArgv: (string | number)[]) => Promise<unknown> {
    if (!this.#fixedKeys) {
      const command = this.#client[script];
      if (!command) throw new Error(`ioredis did not define the command ${script}`);
      return (...keysThenArgv) => command.call(this.#client, keys, ...keysThenArgv);
    }
    const name: `${ScriptName}${number}` = `${script}${keys}`;
    if (!this.#defined.has(name)) {
      const lua = this.#lua[script];
      return (...keysThenArgv) => this.#client.eval(lua, keys, ...keysThenArgv);
    }
    const command = this.#client[name];
    if (!command) throw new Error(`ioredis did not define the command ${name}`);
    return command.bind(this.#client);
  }
}

/** Arguments of one lua/batch.lua call over `calls`: key count, keys, call count, key counts, ARGV. */
export function encodeBatch(calls: readonly (readonly Take[])[]): (string | number)[] {
  const keys: string[] = [];
  const counts: number[] = [];
  const argv: number[] = [];
  for (const takes of calls) {
    counts.push(takes.length);
    for (const t of takes) {
      keys.push(t.key);
      argv.push(t.cost, t.policy.limit, t.policy.periodMs, t.policy.burst);
    }
  }
  return [keys.length, ...keys, calls.length, ...counts, ...argv];
}

/** Split the flat reply of a lua/batch.lua call into one outcome list per call. */
export function decodeBatch(reply: unknown, calls: readonly (readonly Take[])[]): Outcome[][] {
  let total = 0;
  for (const takes of calls) total += takes.length;
  const flat = decodeOutcomes(reply, total);
  const out: Outcome[][] = new Array(calls.length);
  let at = 0;
  for (let i = 0; i < calls.length; i++) {
    const n = (calls[i] as readonly Take[]).length;
    out[i] = flat.slice(at, at + n);
    at += n;
  }
  return out;
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
  const out: Outcome[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = i * 4;
    out[i] = {
      allowed: Number(reply[at]) === 1,
      remaining: Number(reply[at + 1]),
      retryAfterMs: Number(reply[at + 2]),
      resetAfterMs: Number(reply[at + 3]),
    };
  }
  return out;
}
