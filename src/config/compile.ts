/**
 * Compiles validated `DomainSpec`s into the immutable, frozen `RuleSet` the engine matches against.
 */
import { ruleLimitOf } from "../engine/policy.js";
import type {
  DescriptorLevel,
  DescriptorNode,
  DomainRules,
  FailurePolicy,
  KeyNodes,
  Rule,
  RuleSet,
} from "../engine/types.js";
import { maxDebtOf } from "./debt.js";
import { rulePlanOf } from "./hot-path.js";
import type { DescriptorSpec, DomainSpec } from "./spec.js";

/** Compile a glob value: each `*` matches zero or more characters, anywhere; the rest is literal. */
export function compileGlob(value: string): RegExp {
  const parts = value.split(/\*+/).map((p) => p.replace(/[\\^$.|?*+()[\]{}/-]/g, "\\$&"));
  return new RegExp(`^${parts.join("[\\s\\S]*")}$`);
}

/** Path segment of a node: `key` or `key_value`, with characters unsafe in metric names replaced. */
export function pathSegment(key: string, value: string | undefined): string {
  const raw = value === undefined ? key : `${key}_${value}`;
  return raw.replace(/[^\w.*:/@+-]/g, "_");
}

interface Scope {
  readonly domain: string;
  readonly file: string;
  readonly path: string;
  readonly onStoreError: FailurePolicy | undefined;
}

function compileRule(d: DescriptorSpec, scope: Scope, path: string): Rule {
  const limits = Object.freeze(
    d.unlimited
      ? []
      : d.limits.map((l) =>
          ruleLimitOf({
            ...l,
            calendar: d.calendar,
            maxDebt: d.overdraft ? maxDebtOf(l, d.maxDebt) : undefined,
          }),
        ),
  );
  return Object.freeze({
    domain: scope.domain,
    path,
    limits,
    unlimited: d.unlimited,
    shadowMode: d.shadowMode,
    quotaMode: d.quotaMode,
    detailedMetric: d.detailedMetric,
    valueToMetric: d.valueToMetric,
    replaces: Object.freeze([...d.replaces]),
    shards: d.shards,
    lease: d.lease === undefined ? undefined : Object.freeze({ ...d.lease }),
    // A descriptor's on_store_error applies to the rules below it unless they set their own.
    onStoreError: d.onStoreError ?? scope.onStoreError,
    source: Object.freeze({ file: scope.file, line: d.line }),
    plan: rulePlanOf(limits, d.shards),
  });
}

function compileNode(d: DescriptorSpec, scope: Scope): DescriptorNode {
  const path = `${scope.path}.${pathSegment(d.key, d.value)}`;
  const onStoreError = d.onStoreError ?? scope.onStoreError;
  const children = compileLevel(d.children, { ...scope, path, onStoreError });
  const glob = d.value?.includes("*") === true ? compileGlob(d.value) : undefined;
  return Object.freeze({
    key: d.key,
    value: d.value,
    glob,
    shareThreshold: glob !== undefined && d.shareThreshold,
    rule: d.hasRule ? compileRule(d, scope, path) : undefined,
    whitelist: d.value !== undefined && !d.hasRule && d.children.length === 0,
    children,
  });
}

function compileLevel(specs: readonly DescriptorSpec[], scope: Scope): DescriptorLevel {
  const byKey = new Map<
    string,
    { exact: Map<string, DescriptorNode>; globs: DescriptorNode[]; fallback: DescriptorNode | undefined }
  >();
  const exact: DescriptorNode[] = [];
  const globs: DescriptorNode[] = [];
  const defaults: DescriptorNode[] = [];
  for (const d of specs) {
    const node = compileNode(d, scope);
    let forKey = byKey.get(node.key);
    if (forKey === undefined) {
      forKey = { exact: new Map(), globs: [], fallback: undefined };
      byKey.set(node.key, forKey);
    }
    if (node.value === undefined) {
      forKey.fallback = node;
      defaults.push(node);
    } else if (node.glob !== undefined) {
      forKey.globs.push(node);
      globs.push(node);
    } else {
      forKey.exact.set(node.value, node);
      exact.push(node);
    }
  }
  const frozen = new Map<string, KeyNodes>();
  for (const [key, k] of byKey)
    frozen.set(key, Object.freeze({ exact: k.exact, globs: Object.freeze(k.globs), fallback: k.fallback }));
  return Object.freeze({ byKey: frozen, nodes: Object.freeze([...exact, ...globs, ...defaults]) });
}

/** Compile one domain. */
export function compileDomain(spec: DomainSpec): DomainRules {
  const scope: Scope = {
    domain: spec.domain,
    file: spec.file,
    path: pathSegment(spec.domain, undefined),
    onStoreError: undefined,
  };
  return Object.freeze({
    domain: spec.domain,
    root: compileLevel(spec.descriptors, scope),
    onStoreError: spec.onStoreError,
    source: Object.freeze({ file: spec.file, line: spec.line }),
  });
}

/** Compile validated domains (unique by name) into a frozen RuleSet. */
export function compileRuleSet(specs: readonly DomainSpec[], files: readonly string[]): RuleSet {
  const domains = new Map<string, DomainRules>();
  for (const spec of specs) domains.set(spec.domain, compileDomain(spec));
  return Object.freeze({ domains, files: Object.freeze([...files]) });
}
