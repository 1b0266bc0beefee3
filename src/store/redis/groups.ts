/**
 * Split one `take` call into script calls. A script runs on one node and touches one slot, and each
 * algorithm has its own script, so takes are grouped by (slot, algorithm). On a single node the slot
 * is irrelevant and only the algorithm splits a call. Each group remembers the positions of its takes
 * so outcomes go back in request order (and `uncharged` shows a refunded group's outcomes).
 */
import type { Algorithm } from "../../engine/types.js";
import { isForced, type Outcome, type Take } from "../store.js";
import { keySlot } from "./slot.js";

/** Takes of one script call, with their positions in the original call. */
export interface TakeGroup {
  /** Cluster slot of every key in the group; -1 when slots are not used (single node). */
  readonly slot: number;
  readonly algorithm: Algorithm;
  readonly takes: Take[];
  readonly indexes: number[];
}

/** Calls with more takes than this group through a Map; smaller ones (nearly all) by a linear scan. */
const SCAN_MAX_TAKES = 16;

/** Group takes by algorithm, and by hash slot when `bySlot` (Redis Cluster), in first-seen order. */
export function groupTakes(takes: readonly Take[], options: { bySlot: boolean }): TakeGroup[] {
  if (takes.length === 1) {
    const take = takes[0] as Take;
    const slot = options.bySlot ? keySlot(take.key) : -1;
    return [{ slot, algorithm: take.policy.algorithm, takes: [take], indexes: [0] }];
  }
  const groups: TakeGroup[] = [];
  // A few takes (a request's descriptors): comparing against each group needs no string id per take
  // for a Map, a cost paid per request (docs/decisions/merged-redis-calls.md).
  const byId = takes.length > SCAN_MAX_TAKES ? new Map<string, TakeGroup>() : undefined;
  for (let index = 0; index < takes.length; index++) {
    const take = takes[index] as Take;
    const slot = options.bySlot ? keySlot(take.key) : -1;
    const algorithm = take.policy.algorithm;
    let group: TakeGroup | undefined;
    if (byId === undefined) {
      for (const g of groups)
        if (g.slot === slot && g.algorithm === algorithm) {
          group = g;
          break;
        }
    } else group = byId.get(`${slot}:${algorithm}`);
    if (group === undefined) {
      group = { slot, algorithm, takes: [], indexes: [] };
      groups.push(group);
      byId?.set(`${slot}:${algorithm}`, group);
    }
    group.takes.push(take);
    group.indexes.push(index);
  }
  return groups;
}

/** Keys of one multi-key command, all in `slot` (-1 when slots are not used). */
export interface KeyGroup {
  readonly slot: number;
  readonly keys: string[];
}

/** Group keys by hash slot when `bySlot` (for multi-key commands such as DEL in a cluster). */
export function groupKeysBySlot(keys: readonly string[], options: { bySlot: boolean }): KeyGroup[] {
  if (!options.bySlot) return keys.length === 0 ? [] : [{ slot: -1, keys: [...keys] }];
  const groups = new Map<number, KeyGroup>();
  for (const key of keys) {
    const slot = keySlot(key);
    const group = groups.get(slot);
    if (group) group.keys.push(key);
    else groups.set(slot, { slot, keys: [key] });
  }
  return [...groups.values()];
}

/**
 * An allowed outcome of a group that was refunded, shown as the bucket is without the charge. A
 * forced take (refund, overdraft charge) is never refunded: its outcome stands.
 */
export function uncharged(o: Outcome, take: Take | undefined): Outcome {
  if (!take || !o.allowed || take.cost === 0 || isForced(take)) return o;
  const { policy, cost } = take;
  const resetAfterMs =
    policy.algorithm === "gcra"
      ? Math.max(0, Math.ceil(o.resetAfterMs - (cost * policy.periodMs) / policy.limit))
      : o.resetAfterMs;
  return { allowed: true, remaining: o.remaining + cost, retryAfterMs: 0, resetAfterMs };
}
