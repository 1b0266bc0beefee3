/**
 * Descriptor matching with envoyproxy/ratelimit semantics (its `GetLimit`), on the compiled tree.
 *
 * Per level, for the entry at that depth: the exact `key`+`value` node, else the first glob of that
 * key in YAML order whose pattern matches, else the value-less default of that key. Greedy: a level
 * that matched never backtracks to a less specific node. A rule applies only to a descriptor that
 * ends exactly at its node; a descriptor longer than the tree, or ending on a node without a rule,
 * matches nothing.
 */
import type { DescriptorLevel, DescriptorNode, DomainRules, Entry, KeyNodes, Rule } from "./types.js";

/** The result of matching one descriptor. */
export interface Match {
  /** The rule to apply; undefined when the node whitelists the value (no limit, answer OK). */
  readonly rule: Rule | undefined;
  readonly node: DescriptorNode;
  /**
   * Entries that identify the bucket: the runtime entries, except that a `share_threshold` glob
   * level carries the pattern value so that all values it matches share one bucket.
   */
  readonly bucketEntries: readonly Entry[];
}

/** The node `entry` selects at `level` (exact, else first matching glob, else default), as the match walk does. */
export function nodeAt(level: DescriptorLevel, entry: Entry): DescriptorNode | undefined {
  const keyNodes = level.byKey.get(entry.key);
  return keyNodes === undefined ? undefined : pick(keyNodes, entry.value);
}

/** Whether a level has no node at all (a descriptor reaching it is longer than the tree). */
export function isEmptyLevel(level: DescriptorLevel): boolean {
  return level.nodes.length === 0;
}

function pick(keyNodes: KeyNodes, value: string): DescriptorNode | undefined {
  const exact = keyNodes.exact.get(value);
  if (exact !== undefined) return exact;
  for (const node of keyNodes.globs) if (node.glob?.test(value) === true) return node;
  return keyNodes.fallback;
}

/**
 * Match one descriptor against a domain's tree.
 * @returns the match, or undefined when no rule applies (no match: answer OK without a limit).
 */
export function matchDescriptor(domain: DomainRules, entries: readonly Entry[]): Match | undefined {
  let level = domain.root;
  let shared: Entry[] | undefined;
  const last = entries.length - 1;
  for (let i = 0; i <= last; i++) {
    const entry = entries[i] as Entry;
    const keyNodes = level.byKey.get(entry.key);
    const node = keyNodes === undefined ? undefined : pick(keyNodes, entry.value);
    if (node === undefined) return undefined;
    if (node.shareThreshold && node.value !== undefined) {
      shared ??= entries.slice();
      shared[i] = { key: entry.key, value: node.value };
    }
    if (i === last) {
      if (node.rule === undefined && !node.whitelist) return undefined;
      return { rule: node.rule, node, bucketEntries: shared ?? entries };
    }
    if (node.children.nodes.length === 0) return undefined;
    level = node.children;
  }
  return undefined;
}
