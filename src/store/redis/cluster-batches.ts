/**
 * The merged take calls of one turn on a Redis Cluster: one explicit pipeline per master (one write,
 * one round trip), each command routed by its own keys. A batch the cluster redirected (MOVED, ASK),
 * refused mid-migration (TRYAGAIN), or that ioredis refused before sending (the slot's node list
 * changed under the pipeline) ran nowhere: after a slot-map refresh each of its calls is sent again on
 * its own, routed afresh. Any other failure is the batch's answer.
 */
import type { Cluster } from "ioredis";
import type { Outcome } from "../store.js";
import type { Batch } from "./batch.js";
import { decodeBatch, type Scripts } from "./scripts.js";

/** Runs one store command to the node owning `slot` (RedisStore: round trip count, call deadline). */
export type SendOn = <T>(slot: number, run: () => Promise<T>) => Promise<T>;

/** One promise per batch, answered per call with its outcomes or the error it alone failed with. */
export function sendClusterBatches(
  cluster: Clustering,
  scripts: Scripts,
  send: SendOn,
  batches: readonly Batch[],
): Promise<(Outcome[] | Error)[]>[] {
  // Grouped by the slot's whole node list (master and replicas), the key ioredis itself checks a
  // pipeline against; a slot not in the map yet goes alone.
  const byNode = new Map<string, number[]>();
  batches.forEach((b, i) => {
    const nodes = cluster.slots[b.slot];
    const group = nodes && nodes.length > 0 ? nodes.join(",") : `slot:${b.slot}`;
    const list = byNode.get(group);
    if (list) list.push(i);
    else byNode.set(group, [i]);
  });
  const out: Promise<(Outcome[] | Error)[]>[] = new Array(batches.length);
  for (const indexes of byNode.values()) {
    let results: Promise<[error: Error | null, result: unknown][] | null>;
    try {
      const pipeline = cluster.pipeline();
      for (const i of indexes) {
        const b = batches[i] as Batch;
        scripts.queueBatch(pipeline, b.algorithm, b.calls);
      }
      const first = batches[indexes[0] as number] as Batch;
      results = send(first.slot, () => pipeline.exec());
    } catch (err) {
      results = Promise.reject(err);
    }
    indexes.forEach((i, j) => {
      const b = batches[i] as Batch;
      out[i] = results.then(
        (all) => {
          const [err, reply] = all?.[j] ?? [new Error("pipeline lost a reply"), undefined];
          if (err) return resendApart(cluster, scripts, send, b, err);
          return decodeBatch(reply, b.calls);
        },
        (err: unknown) => resendApart(cluster, scripts, send, b, err),
      );
    });
  }
  return out;
}

type Clustering = Pick<Cluster, "slots" | "pipeline" | "refreshSlotsCache">;

/** A batch whose pipeline ran nothing of it: each call again, alone; any other error rethrown. */
async function resendApart(
  cluster: Clustering,
  scripts: Scripts,
  send: SendOn,
  b: Batch,
  err: unknown,
): Promise<(Outcome[] | Error)[]> {
  const text = err instanceof Error ? err.message : String(err);
  if (!/^(MOVED|ASK|TRYAGAIN) |should belong to the same slots allocation group/.test(text)) throw err;
  cluster.refreshSlotsCache();
  return Promise.all(
    b.calls.map((call) =>
      send(b.slot, () => scripts.takeBatch(b.algorithm, [call])).then(
        (one) => one[0] ?? new Error("merged reply lost its call"),
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      ),
    ),
  );
}
