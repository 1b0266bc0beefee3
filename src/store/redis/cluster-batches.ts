/**
 * The merged take calls of one turn on a Redis Cluster: each batch (one slot's calls of one
 * algorithm) is one EVALSHA written by tollgate (resp.ts) and routed by ioredis' cluster client to
 * the master of its slot, which follows MOVED and ASK and retries TRYAGAIN for it as for any command
 * of its own. No Pipeline object: building one per master and turn (ioredis copies
 * the client's defined commands onto it and checks every command's keys) and its generic argument
 * encoding were the largest client cost in the cluster profile (docs/decisions/resp-writer.md).
 *
 * A batch a node refused with CLUSTERDOWN ran nowhere either: during a planned failover a master
 * that takes no part in it can see the moved slots unowned for a few milliseconds (it heard the old
 * master step down before the new one claimed them) and refuses every command meanwhile. Such a
 * batch is sent again after 2, 4, 8 and 16 ms (30 ms in all, past Envoy's 20 ms RLS deadline), then
 * the refusal is its answer: a cluster that stays down fails fast.
 *
 * A batch the server does not know the script of (NOSCRIPT) is reloaded by the script runner
 * (script-runner.ts), like every script call. MOVED, ASK and TRYAGAIN are ioredis' to follow, as
 * for any command routed by its slot.
 */
import type { Cluster } from "ioredis";
import type { Outcome } from "../store.js";
import type { Batch } from "./batch.js";
import type { Scripts } from "./scripts.js";

/**
 * Runs one store command to the node owning `slot` (RedisStore: round trip count, call deadline);
 * `sharedWrite`: it leaves with the node's other commands of this turn.
 */
export type SendOn = <T>(slot: number, run: () => Promise<T>, sharedWrite?: boolean) => Promise<T>;

/** One promise per batch, answered per call with its outcomes or the error it alone failed with. */
export function sendClusterBatches(
  cluster: Clustering,
  scripts: Scripts,
  send: SendOn,
  batches: readonly Batch[],
): Promise<(Outcome[] | Error)[]>[] {
  // Corked while the turn's commands are written, so each master's leave in one write (one round
  // trip per master and turn, as a pipeline made them).
  const masters = cluster.nodes("master");
  for (const node of masters) node.stream?.cork();
  try {
    return batches.map((b) => sendOne(scripts, send, b));
  } finally {
    for (const node of masters) node.stream?.uncork();
  }
}

/** Pauses before each resend of a batch refused with CLUSTERDOWN (milliseconds). */
export const CLUSTER_DOWN_PAUSES_MS: readonly number[] = [2, 4, 8, 16];

const isClusterDown = (err: unknown): boolean =>
  err instanceof Error && err.message.startsWith("CLUSTERDOWN");
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function sendOne(scripts: Scripts, send: SendOn, b: Batch, resends = 0): Promise<(Outcome[] | Error)[]> {
  return send(b.slot, () => scripts.takeBatch(b.algorithm, b.calls, b.slot), resends === 0).catch(
    (err: unknown) => {
      const pauseMs = isClusterDown(err) ? CLUSTER_DOWN_PAUSES_MS[resends] : undefined;
      if (pauseMs === undefined) throw err;
      return pause(pauseMs).then(() => sendOne(scripts, send, b, resends + 1));
    },
  );
}

type Clustering = Pick<Cluster, "nodes">;
