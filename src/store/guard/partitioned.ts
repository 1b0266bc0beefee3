/**
 * One guard per Redis Cluster master: takes are routed by the node that owns their key's slot, so a
 * master that goes away opens only its own circuit breaker and keys on the live masters stay exact.
 *
 * A call whose takes live on one node goes to that node's guard as it is. A call spanning nodes goes
 * to each node's guard in parallel (each decides by Redis or by its failure policy); when any part
 * denies, the parts that charged are refunded, so the call stays all-or-nothing (a refund that cannot
 * reach a failed node only under-admits, never over-admits), and their outcomes are reported
 * uncharged: every bucket as it is after the decision, as on a single node. When a failover moves slots to another
 * node, the keys follow to that node's guard, whose breaker starts closed.
 */

import { uncharged } from "../redis/groups.js";
import { isForced, type Outcome, type Store, type Take } from "../store.js";
import type { BreakerState } from "./breaker.js";
import type { GuardedStore } from "./guarded-store.js";
import type { GuardStatus } from "./status.js";

export interface PartitionedGuardOptions {
  /** The node (partition) that owns a key now. */
  readonly nodeOf: (key: string) => string;
  /** A new guard for a node seen for the first time (all share one inner store and fallback). */
  readonly guardFor: (node: string) => GuardedStore;
  /** The inner store, for ready() and close(). */
  readonly inner: Store;
}

const RANK: Readonly<Record<BreakerState, number>> = { closed: 0, half_open: 1, open: 2 };

export class PartitionedGuard implements Store {
  readonly kind: string;
  readonly #o: PartitionedGuardOptions;
  readonly #guards = new Map<string, GuardedStore>();

  constructor(options: PartitionedGuardOptions) {
    this.#o = options;
    this.kind = `guard-per-node(${options.inner.kind})`;
  }

  take(takes: readonly Take[]): Promise<Outcome[]> {
    // The node of each take, found once; a call on one node goes to its guard as it is.
    const nodes: string[] = new Array(takes.length);
    let spans = false;
    for (let i = 0; i < takes.length; i++) {
      const node = this.#o.nodeOf((takes[i] as Take).key);
      nodes[i] = node;
      if (node !== nodes[0]) spans = true;
    }
    if (!spans) return this.#guard(nodes[0] ?? "").take(takes);
    return this.#takeParts(takes, nodes);
  }

  /** A call spanning nodes: each node's part in parallel, refunded when another part denies. */
  async #takeParts(takes: readonly Take[], nodes: readonly string[]): Promise<Outcome[]> {
    // Parts in first-seen order; a request spans a few nodes, so a scan finds a take's part.
    const partNodes: string[] = [];
    const parts: number[][] = [];
    for (let i = 0; i < takes.length; i++) {
      const p = partNodes.indexOf(nodes[i] as string);
      if (p >= 0) (parts[p] as number[]).push(i);
      else {
        partNodes.push(nodes[i] as string);
        parts.push([i]);
      }
    }
    const answers = await Promise.all(
      parts.map((indexes, p) =>
        this.#guard(partNodes[p] as string).take(indexes.map((i) => takes[i] as Take)),
      ),
    );
    const out: Outcome[] = new Array(takes.length);
    let allAllowed = true;
    for (let p = 0; p < parts.length; p++) {
      const indexes = parts[p] as number[];
      const answer = answers[p] as Outcome[];
      for (let j = 0; j < indexes.length; j++) {
        const o = answer[j] as Outcome;
        out[indexes[j] as number] = o;
        if (!o.allowed) allAllowed = false;
      }
    }
    if (allAllowed) return out;
    // Some part denied: give back what the parts that passed charged, and report their buckets as
    // they are after the decision (uncharged), as a single node reports a call it denied.
    await Promise.all(
      parts.map((indexes, p) => {
        if (!answers[p]?.every((o) => o.allowed)) return Promise.resolve();
        for (const i of indexes) out[i] = uncharged(out[i] as Outcome, takes[i]);
        // Forced takes (refunds, overdraft charges) stay applied, as in one script call.
        const charged = indexes.map((i) => takes[i] as Take).filter((t) => t.cost > 0 && !isForced(t));
        return charged.length === 0
          ? Promise.resolve()
          : this.#guard(partNodes[p] as string)
              .refund(charged)
              .catch(() => {});
      }),
    );
    return out;
  }

  async refund(takes: readonly Take[]): Promise<void> {
    const parts = groupBy(takes, (t) => this.#o.nodeOf(t.key));
    await Promise.all([...parts].map(([node, part]) => this.#guard(node).refund(part)));
  }

  async reset(keys: readonly string[]): Promise<void> {
    const parts = groupBy(keys, (k) => this.#o.nodeOf(k));
    await Promise.all([...parts].map(([node, part]) => this.#guard(node).reset(part)));
  }

  /** Like GuardedStore.ready(): a store down at boot does not keep the service from starting. */
  ready(): Promise<void> {
    return this.#guard("").ready();
  }

  close(): Promise<void> {
    return this.#guard("").close();
  }

  /** The worst state of any node's breaker. */
  get state(): BreakerState {
    let worst: BreakerState = "closed";
    for (const g of this.#guards.values()) if (RANK[g.state] > RANK[worst]) worst = g.state;
    return worst;
  }

  /** The worst node's status, plus every node's state, for `/rlconfig`. */
  status(): GuardStatus & { readonly nodes: Readonly<Record<string, BreakerState>> } {
    let worst: GuardedStore | undefined;
    const nodes: Record<string, BreakerState> = {};
    for (const [node, g] of this.#guards) {
      nodes[node || "(any)"] = g.state;
      if (!worst || RANK[g.state] > RANK[worst.state]) worst = g;
    }
    return { ...(worst ?? this.#guard("")).status(), kind: this.kind, nodes };
  }

  #guard(node: string): GuardedStore {
    let g = this.#guards.get(node);
    if (!g) {
      g = this.#o.guardFor(node);
      this.#guards.set(node, g);
    }
    return g;
  }
}

/** Items by group, in first-seen order. */
function groupBy<T>(items: readonly T[], groupOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const g = groupOf(item);
    const list = groups.get(g);
    if (list) list.push(item);
    else groups.set(g, [item]);
  }
  return groups;
}
