/**
 * The offline CLI commands: `tollgate check PATH` and `tollgate explain`. They print and return an exit
 * code; nothing here listens or touches a store.
 */
import { describeRules } from "./config/describe.js";
import { ConfigError, type ConfigProblem, formatProblem } from "./config/errors.js";
import { FULL_SCHEMA } from "./config/full-schema.js";
import { loadConfig } from "./config/load.js";
import { extAuthzRulesOf } from "./config/sections/ext-authz.js";
import { compileTiers } from "./config/sections/tiers.js";
import { bucketKey } from "./engine/keys.js";
import { matchDescriptor } from "./engine/match.js";
import { effectiveShards } from "./engine/shards.js";
import type { Entry } from "./engine/types.js";

interface Out {
  log(line: string): void;
  error(line: string): void;
}

const consoleOut: Out = { log: (l) => console.log(l), error: (l) => console.error(l) };

/** `tollgate check PATH`: every problem with file:line:column and YAML path (exit 1), or the rules (exit 0). */
export async function runCheck(args: readonly string[], out: Out = consoleOut): Promise<number> {
  const [path, ...extra] = args;
  if (!path || extra.length > 0) {
    out.error("usage: tollgate check PATH");
    return 2;
  }
  try {
    const load = await loadConfig(path, { schema: FULL_SCHEMA });
    // The sections compile after the base config: report their problems the same way.
    extAuthzRulesOf(load);
    const tierProblems: ConfigProblem[] = [];
    compileTiers(load.documents, tierProblems);
    if (tierProblems.length > 0) throw new ConfigError(tierProblems);
    const { ruleSet } = load;
    for (const line of describeRules(ruleSet)) out.log(line);
    out.error(`${path}: ok (${ruleSet.domains.size} domain(s), ${ruleSet.files.length} file(s))`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) out.error(formatProblem(p));
    out.error(`${path}: ${err.problems.length} problem(s)`);
    return 1;
  }
}

function flags(args: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? "";
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) m.set(a.slice(0, eq), a.slice(eq + 1));
    else if (a.startsWith("--")) m.set(a, args[++i] ?? "");
  }
  return m;
}

/** Parse `k=v,k2=v2` into entries; undefined when malformed. */
export function parseDescriptorArg(text: string): Entry[] | undefined {
  const entries: Entry[] = [];
  for (const part of text.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return undefined;
    entries.push({ key: part.slice(0, eq), value: part.slice(eq + 1) });
  }
  return entries;
}

/** `tollgate explain --config PATH --domain D --descriptor k=v,k2=v2`: matched rule, limits, algorithm, key. */
export async function runExplain(args: readonly string[], out: Out = consoleOut): Promise<number> {
  const f = flags(args);
  const config = f.get("--config") ?? "config";
  const domainName = f.get("--domain");
  const entries = parseDescriptorArg(f.get("--descriptor") ?? "");
  if (!domainName || !entries) {
    out.error("usage: tollgate explain --config PATH --domain D --descriptor k=v[,k2=v2]");
    return 2;
  }
  let ruleSet: Awaited<ReturnType<typeof loadConfig>>["ruleSet"];
  try {
    ruleSet = (await loadConfig(config, { schema: FULL_SCHEMA })).ruleSet;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) out.error(formatProblem(p));
    return 1;
  }
  const domain = ruleSet.domains.get(domainName);
  if (!domain) {
    out.log(`domain ${domainName}: not configured → OK, no limit`);
    return 0;
  }
  const match = matchDescriptor(domain, entries);
  if (!match) {
    out.log("no rule matches → OK, no limit");
    return 0;
  }
  if (!match.rule) {
    out.log("whitelisted value → OK, no limit");
    return 0;
  }
  const rule = match.rule;
  out.log(`rule: ${rule.path} (${rule.source.file}:${rule.source.line})`);
  if (rule.unlimited) out.log("unlimited → OK, limit_remaining 4294967295");
  const flagsOn = [rule.shadowMode && "shadow_mode", rule.quotaMode && "quota_mode"].filter(Boolean);
  if (flagsOn.length > 0) out.log(`flags: ${flagsOn.join(", ")}`);
  const shards = effectiveShards(
    rule.shards,
    rule.limits.map((l) => l.policy),
  );
  if (shards > 1) out.log(`shards: ${shards} (each holds 1/${shards} of rate and burst)`);
  rule.limits.forEach((limit, i) => {
    const name = limit.name ? ` name=${limit.name}` : "";
    out.log(
      `limit ${i}: ${limit.requestsPerUnit}/${limit.unit} burst ${limit.policy.burst} ${limit.policy.algorithm}${name}`,
    );
    const key = (shard?: number) =>
      bucketKey({
        prefix: "",
        domain: domainName,
        entries: match.bucketEntries,
        limitIndex: i,
        algorithm: limit.policy.algorithm,
        shard,
      });
    out.log(shards > 1 ? `  keys: ${key(0)} … ${key(shards - 1)}` : `  key: ${key()}`);
  });
  return 0;
}
