/**
 * A normalized, sorted, one-line-per-rule listing of a RuleSet, for `GET /rlconfig` and
 * `tollgate check`, e.g. `edge.tenant.route_class_read: 100/minute burst 200 gcra name=read shadow`.
 */
import type { DescriptorLevel, DescriptorNode, Rule, RuleLimit, RuleSet } from "../engine/types.js";
import { pathSegment } from "./compile.js";

function describeLimit(l: RuleLimit): string {
  const burst =
    l.policy.algorithm === "gcra" && l.policy.burst !== l.requestsPerUnit ? ` burst ${l.policy.burst}` : "";
  const name = l.name === undefined ? "" : ` name=${l.name}`;
  const calendar = l.policy.calendar === undefined ? "" : ` calendar ${l.policy.calendar.timeZone}`;
  const debt = l.policy.maxDebt === undefined ? "" : ` overdraft max_debt ${l.policy.maxDebt}`;
  return `${l.requestsPerUnit}/${l.unit}${burst} ${l.policy.algorithm}${calendar}${name}${debt}`;
}

function describeRule(rule: Rule, node: DescriptorNode): string {
  const parts = [rule.unlimited ? "unlimited" : rule.limits.map(describeLimit).join(" + ")];
  if (rule.shadowMode) parts.push("shadow");
  if (rule.quotaMode) parts.push("quota");
  if (node.shareThreshold) parts.push("share_threshold");
  if (rule.detailedMetric) parts.push("detailed_metric");
  if (rule.valueToMetric) parts.push("value_to_metric");
  if (rule.replaces.length > 0) parts.push(`replaces=${rule.replaces.join(",")}`);
  if (rule.shards > 1) parts.push(`shards=${rule.shards}`);
  if (rule.lease !== undefined) parts.push(`lease=${rule.lease.size}/${rule.lease.ttlMs}ms`);
  if (rule.onStoreError !== undefined) parts.push(`on_store_error=${rule.onStoreError}`);
  return `${rule.path}: ${parts.join(" ")}`;
}

function collect(level: DescriptorLevel, parentPath: string, out: string[]): void {
  for (const node of level.nodes) {
    const path = `${parentPath}.${pathSegment(node.key, node.value)}`;
    if (node.rule !== undefined) out.push(describeRule(node.rule, node));
    else if (node.whitelist) out.push(`${path}: whitelisted`);
    collect(node.children, path, out);
  }
}

/** One line per rule (and per whitelisted value, and per domain with a store-error policy), sorted. */
export function describeRules(ruleSet: RuleSet): string[] {
  const out: string[] = [];
  for (const domain of ruleSet.domains.values()) {
    if (domain.onStoreError !== undefined)
      out.push(`${domain.domain}: on_store_error=${domain.onStoreError}`);
    collect(domain.root, domain.domain, out);
  }
  return out.sort();
}

/** Every rule of a domain's descriptor tree, parents before their children. */
export function rulesOf(level: DescriptorLevel): Rule[] {
  const out: Rule[] = [];
  const walk = (l: DescriptorLevel) => {
    for (const node of l.nodes) {
      if (node.rule !== undefined) out.push(node.rule);
      walk(node.children);
    }
  };
  walk(level);
  return out;
}
