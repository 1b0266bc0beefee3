/**
 * `tollgate explain --domain D --descriptor k=v[,k2=v2] [--descriptor …] [serve options]`: what
 * `serve`, with the same settings, would do with each descriptor: the rule it matches (or the tier
 * that answers it), its limits and bucket keys, or how far the match walk got and why nothing
 * applies. The config is read and validated exactly as `serve` and `check` read it.
 */
import type { Out } from "./cli-out.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { loadConfig } from "./config/load.js";
import { type DescriptorTrace, levelChoices, traceDescriptor } from "./config/match-trace.js";
import { loadServingConfig, type ServingConfig } from "./config/serving.js";
import { closest } from "./config/suggest.js";
import { bucketKey } from "./engine/keys.js";
import { effectiveShards } from "./engine/shards.js";
import { matchTier } from "./engine/tiers.js";
import type { Entry, Rule } from "./engine/types.js";
import { commandUsage } from "./help.js";
import { loadSettings, type Settings, SettingsError } from "./settings.js";
import { validationOptionsOf } from "./validation.js";

const USAGE = commandUsage("explain");

/** A `--descriptor` that cannot be read; the message says what is wrong with which part. */
export class DescriptorArgError extends Error {}

/** Parse `k=v,k2=v2` into entries (split at the first `=` of each part); throws DescriptorArgError. */
export function parseDescriptorArg(text: string): Entry[] {
  const where = `--descriptor ${JSON.stringify(text)}`;
  if (text === "") throw new DescriptorArgError(`${where}: empty (expected k=v[,k2=v2])`);
  return text.split(",").map((part, i) => {
    const eq = part.indexOf("=");
    if (eq < 0)
      throw new DescriptorArgError(
        `${where}: entry ${i + 1} ${JSON.stringify(part)} has no "=" (expected key=value)`,
      );
    if (eq === 0)
      throw new DescriptorArgError(`${where}: entry ${i + 1} ${JSON.stringify(part)} has an empty key`);
    return { key: part.slice(0, eq), value: part.slice(eq + 1) };
  });
}

interface ExplainArgs {
  readonly domain: string | undefined;
  readonly descriptors: readonly string[];
  /** Everything else: serve's options. */
  readonly rest: readonly string[];
}

function splitArgs(args: readonly string[]): ExplainArgs {
  let domain: string | undefined;
  const descriptors: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? "";
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (name !== "--domain" && name !== "--descriptor") {
      rest.push(a);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw new DescriptorArgError(`${name} needs a value`);
    if (name === "--domain") domain = value;
    else descriptors.push(value);
  }
  return { domain, descriptors, rest };
}

function describeTrace(trace: DescriptorTrace, out: Out): void {
  for (const s of trace.steps) {
    const how = s.how === "default" ? "any value" : s.how === "glob" ? `glob ${s.node.value}` : "exact value";
    out.log(`  ${s.entry.key}=${s.entry.value} → ${s.path} (${how})`);
  }
  const end = trace.end;
  const last = trace.steps.at(-1)?.path;
  if (end.kind === "no-node") {
    const here = levelChoices(end.level);
    const at = last === undefined ? "at the top level" : `below ${last}`;
    out.log(
      `  ${end.entry.key}=${end.entry.value} → nothing ${at} (there: ${here.length > 0 ? here.join(", ") : "no descriptors"})`,
    );
  } else if (end.kind === "tree-ends") {
    out.log(
      `  ${end.extra.map((e) => `${e.key}=${e.value}`).join(",")} → the tree ends at ${last} (no deeper descriptors)`,
    );
  } else if (end.kind === "no-rule") {
    out.log(`  the descriptor ends at ${last}, which has no rate limit`);
  }
}

function describeRule(
  rule: Rule,
  entries: readonly Entry[],
  domain: string,
  settings: Settings,
  out: Out,
): void {
  out.log(`  rule: ${rule.path} (${rule.source.file}:${rule.source.line})`);
  if (rule.unlimited) out.log("  unlimited → OK, limit_remaining 4294967295");
  const flagsOn = [rule.shadowMode && "shadow_mode", rule.quotaMode && "quota_mode"].filter(Boolean);
  if (flagsOn.length > 0) out.log(`  flags: ${flagsOn.join(", ")}`);
  const shards = effectiveShards(
    rule.shards,
    rule.limits.map((l) => l.policy),
  );
  if (shards > 1) out.log(`  shards: ${shards} (each holds 1/${shards} of rate and burst)`);
  rule.limits.forEach((limit, i) => {
    const name = limit.name ? ` name=${limit.name}` : "";
    const { burst, algorithm } = limit.policy;
    out.log(`  limit ${i}: ${limit.requestsPerUnit}/${limit.unit} burst ${burst} ${algorithm}${name}`);
    const key = (shard?: number) =>
      bucketKey({ prefix: settings.keyPrefix, domain, entries, limitIndex: i, algorithm, shard });
    out.log(shards > 1 ? `    keys: ${key(0)} … ${key(shards - 1)}` : `    key: ${key()}`);
  });
}

function explainOne(
  config: ServingConfig,
  domain: string,
  entries: readonly Entry[],
  settings: Settings,
  out: Out,
) {
  out.log(`descriptor ${entries.map((e) => `${e.key}=${e.value}`).join(",")}:`);
  const rules = config.rules.domains.get(domain);
  const trace = rules === undefined ? undefined : traceDescriptor(rules, entries);
  const node = trace?.steps.at(-1)?.node;
  if (trace !== undefined) describeTrace(trace, out);
  if (trace?.end.kind === "rule" && node?.rule !== undefined) {
    describeRule(node.rule, entries, domain, settings, out);
    return;
  }
  if (trace?.end.kind === "whitelisted") {
    out.log("  whitelisted value → OK, no limit");
    return;
  }
  const tier = matchTier(config.tiers, domain, entries);
  if (tier !== undefined) {
    out.log(`  answered by the tiers section: tier ${tier.tier}`);
    describeRule(tier.rule, tier.bucketEntries, domain, settings, out);
    return;
  }
  out.log("  no rule matches → OK, no limit");
}

function unknownDomain(config: ServingConfig, domain: string, out: Out): void {
  const known = [...new Set([...config.rules.domains.keys(), ...config.tiers.tables.keys()])].sort();
  const hint = closest(domain, known);
  const mean = hint === undefined ? "" : ` (did you mean ${JSON.stringify(hint)}?)`;
  const list = known.length > 0 ? `; configured: ${known.join(", ")}` : "";
  out.log(`domain ${JSON.stringify(domain)} is not configured${mean}${list} → every descriptor OK, no limit`);
}

/** Run `tollgate explain`; returns the exit code (2: usage or settings, 1: invalid config). */
export async function runExplain(
  args: readonly string[],
  out: Out,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let parsed: ExplainArgs;
  let descriptors: Entry[][];
  let settings: Settings;
  try {
    parsed = splitArgs(args);
    descriptors = parsed.descriptors.map(parseDescriptorArg);
    settings = loadSettings(parsed.rest, env);
  } catch (err) {
    if (!(err instanceof DescriptorArgError || err instanceof SettingsError)) throw err;
    out.error(`tollgate explain: ${err.message}\n${USAGE}`);
    return 2;
  }
  const domain = parsed.domain;
  if (domain === undefined || descriptors.length === 0) {
    out.error(USAGE);
    return 2;
  }
  let config: ServingConfig;
  try {
    config = await loadServingConfig((o) => loadConfig(settings.config, o), validationOptionsOf(settings));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) out.error(formatProblem(p));
    out.error(`${settings.config}: ${err.problems.length} problem(s)`);
    return 1;
  }
  if (!config.rules.domains.has(domain) && !config.tiers.tables.has(domain)) {
    unknownDomain(config, domain, out);
    return 0;
  }
  for (const entries of descriptors) explainOne(config, domain, entries, settings, out);
  return 0;
}
