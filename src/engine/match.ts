/**
 * Descriptor matching with envoyproxy/ratelimit semantics (its `GetLimit`), on the compiled tree.
 *
 * Per level, for the entry at that depth: the exact `key`+`value` node, else the first glob of that
 * key in YAML order whose pattern matches, else the value-less default of that key. Greedy: a level
 * that matched never backtracks to a less specific node. A rule applies only to a descriptor that
 * ends exactly at its node; a descriptor longer than the tree, or ending on a node without a rule,
 * matches nothing.
 */
import type { DescriptorLevel, DescriptorNode, DomainRules, Entry, Rule } from "./types.js";

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

/** Per-key lookup of one level, so that a request builds no strings to match. */
interface KeyIndex {
  readonly exact: ReadonlyMap<string, DescriptorNode>;
  readonly globs: readonly DescriptorNode[];
  readonly fallback: DescriptorNode | undefined;
}

type LevelIndex = ReadonlyMap<string, KeyIndex>;

const indexes = new WeakMap<DescriptorLevel, LevelIndex>();

function buildIndex(level: DescriptorLevel): LevelIndex {
  const byKey = new Map<
    string,
    { exact: Map<string, DescriptorNode>; globs: DescriptorNode[]; fallback?: DescriptorNode }
  >();
  const slot = (key: string) => {
    let s = byKey.get(key);
    if (s === undefined) {
      s = { exact: new Map(), globs: [] };
      byKey.set(key, s);
    }
    return s;
  };
  for (const node of level.exact.values())
    if (node.value !== undefined) slot(node.key).exact.set(node.value, node);
  for (const node of level.globs) slot(node.key).globs.push(node);
  for (const node of level.defaults.values()) slot(node.key).fallback = node;
  const index = new Map<string, KeyIndex>();
  for (const [key, s] of byKey)
    index.set(key, Object.freeze({ exact: s.exact, globs: s.globs, fallback: s.fallback }));
  return index;
}

function indexOf(level: DescriptorLevel): LevelIndex {
  let index = indexes.get(level);
  if (index === undefined) {
    index = buildIndex(level);
    indexes.set(level, index);
  }
  return index;
}

function isEmpty(level: DescriptorLevel): boolean {
  return level.exact.size === 0 && level.globs.length === 0 && level.defaults.size === 0;
}

/** Build the lookup indexes of a whole domain ahead of the first request (compile calls this). */
export function prepareMatching(domain: DomainRules): void {
  const stack: DescriptorLevel[] = [domain.root];
  for (let level = stack.pop(); level !== undefined; level = stack.pop()) {
    indexOf(level);
    for (const node of level.exact.values()) stack.push(node.children);
    for (const node of level.globs) stack.push(node.children);
    for (const node of level.defaults.values()) stack.push(node.children);
  }
}

/** The node `entry` selects at `level` (exact, else first matching glob, else default), as the match walk does. */
export function nodeAt(level: DescriptorLevel, entry: Entry): DescriptorNode | undefined {
  const keyIndex = indexOf(level).get(entry.key);
  return keyIndex === undefined ? undefined : pick(keyIndex, entry.value);
}

/** Whether a level has no node at all (a descriptor reaching it is longer than the tree). */
export function isEmptyLevel(level: DescriptorLevel): boolean {
  return isEmpty(level);
}

function pick(keyIndex: KeyIndex, value: string): DescriptorNode | undefined {
  const exact = keyIndex.exact.get(value);
  if (exact !== undefined) return exact;
  for (const node of keyIndex.globs) if (node.glob?.test(value) === true) return node;
  return keyIndex.fallback;
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
    const keyIndex = indexOf(level).get(entry.key);
    const node = keyIndex === undefined ? undefined : pick(keyIndex, entry.value);
    if (node === undefined) return undefined;
    if (node.shareThreshold && node.value !== undefined) {
      shared ??= entries.slice();
      shared[i] = { key: entry.key, value: node.value };
    }
    if (i === last) {
      if (node.rule === undefined && !node.whitelist) return undefined;
      return { rule: node.rule, node, bucketEntries: shared ?? entries };
    }
    if (isEmpty(node.children)) return undefined;
    level = node.children;
  }
  return undefined;
}
