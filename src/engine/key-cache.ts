/**
 * The planner's per-rule cache of bucket keys (plan.ts), by entry values.
 */
import type { Entry } from "./types.js";

/** Cached key sets per rule (see KeyCache). */
const KEY_CACHE_MAX = 10_000;

/** The keys of one rule for one list of entries. */
export interface KeySet {
  /** The domain's key head the keys start with (a rule from the tier fallback may serve several domains). */
  readonly head: string;
  readonly entries: readonly Entry[];
  readonly keyBase: string;
  readonly keys: readonly (readonly string[])[];
}

interface KeyNode {
  next: Map<string, KeyNode> | undefined;
  set: KeySet | undefined;
}

/**
 * Bucket keys of one rule by entry values, so a value seen again reuses its key strings instead of
 * escaping and concatenating them anew. Besides the building, a reused string keeps its hash: the
 * in-process store's Map and the cluster slot grouping do not hash a fresh 60-byte key per bucket
 * per request. Values are looked up level by level (the decoder interns short values, so each
 * lookup is by a string whose hash is known); the entry keys are compared on a hit. Bounded: past
 * `KEY_CACHE_MAX` sets the rule's cache starts again empty, so a flood of distinct values (one key
 * per client IP) costs a bounded amount of memory and little time.
 */
export class KeyCache {
  #root = new Map<string, KeyNode>();
  #size = 0;

  get(head: string, entries: readonly Entry[]): KeySet | undefined {
    let level: Map<string, KeyNode> | undefined = this.#root;
    let node: KeyNode | undefined;
    for (let i = 0; i < entries.length; i++) {
      node = level?.get((entries[i] as Entry).value);
      if (node === undefined) return undefined;
      level = node.next;
    }
    const set = node?.set;
    if (set === undefined || set.head !== head || set.entries.length !== entries.length) return undefined;
    for (let i = 0; i < entries.length; i++)
      if ((set.entries[i] as Entry).key !== (entries[i] as Entry).key) return undefined;
    return set;
  }

  add(set: KeySet): void {
    if (this.#size >= KEY_CACHE_MAX) {
      this.#root = new Map();
      this.#size = 0;
    }
    let level = this.#root;
    let node: KeyNode | undefined;
    for (let i = 0; i < set.entries.length; i++) {
      const value = (set.entries[i] as Entry).value;
      node = level.get(value);
      if (node === undefined) {
        node = { next: undefined, set: undefined };
        level.set(value, node);
      }
      if (i < set.entries.length - 1) {
        node.next ??= new Map();
        level = node.next;
      }
    }
    if (node === undefined) return;
    if (node.set === undefined) this.#size++;
    node.set = set;
  }
}
