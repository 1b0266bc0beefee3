/**
 * The one way tollgate sends a Lua script to Redis: `run(script, keys, args)` (or `runEncoded` for an
 * EVALSHA whose bytes the hot path already wrote, resp.ts) → the reply. Every call is an EVALSHA
 * written by tollgate (`EncodedCommand`: ioredis writes its bytes through `toWritable()` and, in a
 * cluster, routes it by `getSlot()`, following MOVED, ASK and TRYAGAIN as for its own commands;
 * test/store/redis/ioredis-hooks.test.ts fails if an ioredis upgrade stops calling either hook).
 *
 * NOSCRIPT recovery lives here and nowhere else: a server that does not hold the script (first call,
 * SCRIPT FLUSH, a restart, a failover to a fresh node) gets the same call once more as EVAL with the
 * script text, routed to the same slot, which runs it and loads it for the EVALSHAs after.
 *
 * Two implementations differ only in where a call goes and when its bytes leave:
 * - `SingleNodeRunner` (one node, or a Sentinel's master): `run` calls of one event-loop turn leave in
 *   one write (the stream is corked until `setImmediate`, where ioredis' auto-pipeline flushed);
 *   `runEncoded` (the merged take call, sent when the batcher flushes at the end of a turn) is
 *   written at once.
 * - `ClusterRunner`: a call goes to the master of its keys' slot; `run` calls of one turn leave in
 *   one write per master, as with `runEncoded` when the caller corks (cluster-batches.ts).
 */
import { createHash } from "node:crypto";
import { Cluster, type Redis } from "ioredis";
import { EncodedCommand, encodeEvalsha } from "./resp.js";
import { keySlot } from "./slot.js";

/** A Lua script: its name (for errors), text and SHA1 (what EVALSHA names it by). */
export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/** `name`'s script of text `lua`, with its SHA1. */
export function scriptOf(name: string, lua: string): Script {
  return Object.freeze({ name, lua, sha: createHash("sha1").update(lua).digest("hex") });
}

/** Sends scripts to Redis. */
export interface ScriptRunner {
  /** Run `script` over `keys` (all in one slot) and `args`: its reply (or its error). */
  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /**
   * Run the EVALSHA `evalsha` of `script` already written as RESP (resp.ts), whose keys are all in
   * `slot` (-1 on a single node).
   */
  runEncoded(script: Script, evalsha: Buffer, slot: number): Promise<unknown>;
}

export const isNoScript = (err: unknown): boolean =>
  err instanceof Error && err.message.startsWith("NOSCRIPT");

/** What a runner needs of an ioredis client: to send a command (routed by its slot in a cluster). */
type Sending = Pick<Redis, "sendCommand">;

/** Send `bytes` (an EVALSHA of `script`) to `slot`; on NOSCRIPT, once more as EVAL (the one recovery). */
function sendWithReload(client: Sending, script: Script, bytes: Buffer, slot: number): Promise<unknown> {
  const command = new EncodedCommand(bytes, slot);
  void client.sendCommand(command);
  return command.promise.catch((err: unknown) => {
    if (!isNoScript(err)) throw err;
    const reload = new EncodedCommand(evalOf(script, bytes), slot);
    void client.sendCommand(reload);
    return reload.promise;
  });
}

const EVALSHA_NAME = "$7\r\nevalsha\r\n";

/**
 * The EVAL of the same call as the EVALSHA `bytes`: `*N`, then the script text in place of the
 * command name and SHA1, then the same key count, keys and arguments.
 */
export function evalOf(script: Script, bytes: Buffer): Buffer {
  const countEnd = bytes.indexOf("\r\n") + 2;
  const shaHead = `$${script.sha.length}\r\n`;
  const shaAt = countEnd + EVALSHA_NAME.length + shaHead.length;
  const prefix = bytes.toString("latin1", 0, shaAt + script.sha.length + 2);
  if (prefix !== `${bytes.toString("latin1", 0, countEnd)}${EVALSHA_NAME}${shaHead}${script.sha}\r\n`)
    throw new Error(`not an EVALSHA of ${script.name}`);
  const lua = Buffer.from(script.lua, "utf8");
  return Buffer.concat([
    bytes.subarray(0, countEnd),
    Buffer.from(`$4\r\neval\r\n$${lua.length}\r\n`, "latin1"),
    lua,
    Buffer.from("\r\n", "latin1"),
    bytes.subarray(shaAt + script.sha.length + 2),
  ]);
}

/**
 * Corks streams while one event-loop turn's commands are written, uncorking at `setImmediate` (the
 * point ioredis' auto-pipeline flushed at), so they leave in one write per stream.
 */
class TurnCork {
  #corked: { uncork(): void }[] = [];
  readonly #release = () => {
    const corked = this.#corked;
    this.#corked = [];
    for (const s of corked) s.uncork();
  };

  /** Cork `streams` until the end of this turn (once per turn). */
  hold(streams: () => readonly ({ cork(): void; uncork(): void } | undefined | null)[]): void {
    if (this.#corked.length > 0) return;
    for (const s of streams()) {
      if (!s) continue;
      s.cork();
      this.#corked.push(s);
    }
    if (this.#corked.length > 0) setImmediate(this.#release);
  }
}

/** Options of a runner. */
export interface RunnerOptions {
  /** `run` calls of one turn leave in one write (as ioredis' auto-pipelining did). @default true */
  readonly shareTurn?: boolean;
}

/** Scripts on one node (or a Sentinel's current master). */
export class SingleNodeRunner implements ScriptRunner {
  readonly #client: Pick<Redis, "sendCommand" | "stream">;
  readonly #shareTurn: boolean;
  readonly #cork = new TurnCork();

  constructor(client: Pick<Redis, "sendCommand" | "stream">, options: RunnerOptions = {}) {
    this.#client = client;
    this.#shareTurn = options.shareTurn ?? true;
  }

  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (this.#shareTurn) this.#cork.hold(() => [this.#client.stream]);
    return sendWithReload(
      this.#client,
      script,
      encodeEvalsha(script.sha, [keys.length, ...keys, ...args]),
      -1,
    );
  }

  /** `_slot`: always -1 on one node. */
  runEncoded(script: Script, evalsha: Buffer, _slot = -1): Promise<unknown> {
    return sendWithReload(this.#client, script, evalsha, -1);
  }
}

/** Scripts on a Redis Cluster: each call to the master of its keys' slot. */
export class ClusterRunner implements ScriptRunner {
  readonly #client: Pick<Cluster, "sendCommand" | "nodes">;
  readonly #shareTurn: boolean;
  readonly #cork = new TurnCork();

  constructor(client: Pick<Cluster, "sendCommand" | "nodes">, options: RunnerOptions = {}) {
    this.#client = client;
    this.#shareTurn = options.shareTurn ?? true;
  }

  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const [first] = keys;
    if (first === undefined)
      return Promise.reject(new Error(`${script.name}: a cluster script call needs a key`));
    if (this.#shareTurn) this.#cork.hold(() => this.#client.nodes("master").map((n) => n.stream));
    const bytes = encodeEvalsha(script.sha, [keys.length, ...keys, ...args]);
    return sendWithReload(this.#client, script, bytes, keySlot(first));
  }

  runEncoded(script: Script, evalsha: Buffer, slot: number): Promise<unknown> {
    return sendWithReload(this.#client, script, evalsha, slot);
  }
}

/** The runner of `client`: a {@link ClusterRunner} for a Cluster client, else a {@link SingleNodeRunner}. */
export function runnerFor(client: Redis | Cluster, options: RunnerOptions = {}): ScriptRunner {
  return client instanceof Cluster
    ? new ClusterRunner(client, options)
    : new SingleNodeRunner(client, options);
}
