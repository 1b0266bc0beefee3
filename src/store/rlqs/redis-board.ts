/**
 * The Redis usage board: lua/rlqs_usage.lua, one EVALSHA per bucket per usage report or re-read, on its own
 * client (single node, Sentinel or Cluster: the script touches one key, routed by it), sent through the
 * script runner as every other script is (script-runner.ts: routing, NOSCRIPT recovery). Errors are
 * StoreErrors, which the RLQS service turns into the domain's failure policy (docs/rlqs.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Cluster, Redis } from "ioredis";
import type { Participant } from "../../engine/rlqs/allocator.js";
import { createRedisClient, type RedisClientOptions, resolveClientOptions } from "../redis/client.js";
import { runnerFor, type Script, type ScriptRunner, scriptOf } from "../redis/script-runner.js";
import { DEFAULT_SCRIPTS_DIR } from "../redis/scripts.js";
import { parseRedisUrl } from "../redis/url.js";
import { waitUntilReady } from "../redis/wait-ready.js";
import { StoreError } from "../store.js";
import type { UsageBoard, UsageEntry } from "./board.js";

/** Options of {@link RedisUsageBoard}. */
export interface RedisUsageBoardOptions extends RedisClientOptions {
  readonly url: string;
  /** How long a call waits for a connection that is not ready, ms. @default 1000 */
  readonly connectWaitMs?: number;
  /** Directory of lua/. @default the package's */
  readonly scriptsDir?: string;
}

/** A number as the script stores it: plain decimal, 6 fractional digits at most. */
const decimal = (x: number) => (Number.isFinite(x) && x > 0 ? String(Math.round(x * 1e6) / 1e6) : "0");

/** See the module comment. */
export class RedisUsageBoard implements UsageBoard {
  readonly kind = "redis";
  readonly #client: Redis | Cluster;
  readonly #runner: ScriptRunner;
  /** lua/rlqs_usage.lua: KEYS[1] the bucket's hash; ARGV participant, demand, held, staleMs. */
  readonly #script: Script;
  readonly #connectWaitMs: number;
  /** One shared wait for the connection (calls arriving together add no listener each). */
  #waiting: Promise<void> | undefined;

  constructor(opts: RedisUsageBoardOptions) {
    const { url, scriptsDir, connectWaitMs, ...client } = opts;
    this.#connectWaitMs = connectWaitMs ?? 1000;
    const target = parseRedisUrl(url);
    this.#client = createRedisClient(target, client);
    this.#client.on("error", () => {});
    const { autoPipelining } = resolveClientOptions(client, { cluster: target.mode === "cluster" });
    this.#runner = runnerFor(this.#client, { shareTurn: autoPipelining });
    const lua = readFileSync(join(scriptsDir ?? DEFAULT_SCRIPTS_DIR, "rlqs_usage.lua"), "utf8");
    this.#script = scriptOf("rlqs_usage.lua", lua);
  }

  report(key: string, entry: UsageEntry, staleMs: number): Promise<Participant[]> {
    return this.#call(key, entry, staleMs);
  }

  read(key: string, staleMs: number): Promise<Participant[]> {
    return this.#call(key, undefined, staleMs);
  }

  async #call(key: string, entry: UsageEntry | undefined, staleMs: number): Promise<Participant[]> {
    let reply: unknown;
    try {
      // The offline queue is off: wait (bounded) for the first connection or a reconnect.
      if (this.#client.status !== "ready") await this.#connected();
      reply = await this.#runner.run(
        this.#script,
        [key],
        [
          entry?.participant ?? "",
          decimal(entry?.demand ?? 0),
          decimal(entry?.held ?? 0),
          Math.max(1, Math.round(staleMs)),
        ],
      );
    } catch (err) {
      throw new StoreError(`rlqs usage report failed: ${(err as Error).message}`, {
        code: "rlqs_usage",
        transient: true,
        cause: err,
      });
    }
    if (!Array.isArray(reply) || reply.length % 3 !== 0)
      throw new StoreError("rlqs usage report: unexpected reply", { code: "bad_reply", transient: false });
    const out: Participant[] = [];
    for (let i = 0; i < reply.length; i += 3)
      out.push({ id: String(reply[i]), demand: Number(reply[i + 1]), held: Number(reply[i + 2]) });
    return out;
  }

  #connected(): Promise<void> {
    this.#waiting ??= waitUntilReady(this.#client, this.#connectWaitMs).finally(() => {
      this.#waiting = undefined;
    });
    return this.#waiting;
  }

  async leave(key: string, participant: string): Promise<void> {
    try {
      await this.#client.hdel(key, participant);
    } catch (err) {
      throw new StoreError(`rlqs usage leave failed: ${(err as Error).message}`, {
        code: "rlqs_usage",
        transient: true,
        cause: err,
      });
    }
  }

  /** Resolves once the client is connected and ready (rejects after `timeoutMs`). */
  async ready(timeoutMs = 10_000): Promise<void> {
    await waitUntilReady(this.#client, timeoutMs);
  }

  async close(): Promise<void> {
    this.#client.disconnect();
  }
}
