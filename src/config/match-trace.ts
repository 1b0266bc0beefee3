/**
 * The match walk of `matchDescriptor`, step by step, for `tollgate explain`: which node each entry
 * selected and, when no rule applies, where and why the walk stopped. Not on the request path.
 */
import { isEmptyLevel, nodeAt } from "../engine/match.js";
import type { DescriptorLevel, DescriptorNode, DomainRules, Entry } from "../engine/types.js";
import { pathSegment } from "./compile.js";

/** One entry the walk consumed and the node it selected. */
export interface TraceStep {
  readonly entry: Entry;
  readonly node: DescriptorNode;
  /** Config path of the node, e.g. `edge.tenant.route_class_read`. */
  readonly path: string;
  /** How the node matched: its exact value, a glob, or the value-less default of the key. */
  readonly how: "exact" | "glob" | "default";
}

/** Why the walk ended. */
export type TraceEnd =
  /** The last entry's node carries a rule. */
  | { readonly kind: "rule" }
  /** The last entry's node whitelists its value. */
  | { readonly kind: "whitelisted" }
  /** No node at this level for the entry; `level` lists what was there. */
  | { readonly kind: "no-node"; readonly entry: Entry; readonly level: DescriptorLevel }
  /** The descriptor ended on a node without a rate limit. */
  | { readonly kind: "no-rule" }
  /** The descriptor has more entries than the tree has levels below the last node. */
  | { readonly kind: "tree-ends"; readonly extra: readonly Entry[] };

/** The whole walk of one descriptor. */
export interface DescriptorTrace {
  readonly steps: readonly TraceStep[];
  readonly end: TraceEnd;
}

function how(node: DescriptorNode): TraceStep["how"] {
  if (node.value === undefined) return "default";
  return node.glob === undefined ? "exact" : "glob";
}

/** Walk `entries` through `domain` the way `matchDescriptor` does, recording each step. */
export function traceDescriptor(domain: DomainRules, entries: readonly Entry[]): DescriptorTrace {
  const steps: TraceStep[] = [];
  let level = domain.root;
  let path = pathSegment(domain.domain, undefined);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    const node = nodeAt(level, entry);
    if (node === undefined) return { steps, end: { kind: "no-node", entry, level } };
    path = `${path}.${pathSegment(node.key, node.value)}`;
    steps.push({ entry, node, path, how: how(node) });
    if (i === entries.length - 1) {
      if (node.rule !== undefined) return { steps, end: { kind: "rule" } };
      return { steps, end: { kind: node.whitelist ? "whitelisted" : "no-rule" } };
    }
    if (isEmptyLevel(node.children))
      return { steps, end: { kind: "tree-ends", extra: entries.slice(i + 1) } };
    level = node.children;
  }
  return { steps, end: { kind: "no-rule" } };
}

/** Every node of a level, as `key=value` (`key` alone for a default), in match order. */
export function levelChoices(level: DescriptorLevel): string[] {
  return level.nodes.map((n) => (n.value === undefined ? `${n.key}=(any)` : `${n.key}=${n.value}`));
}
