/**
 * The config a running process serves: descriptor rules, ext_authz extraction rules and tiers, read
 * through its config source (files or xDS) by the one validation path, `loadServingConfig`, and
 * swapped together. Reloads run one at a time (SIGHUP, the file watcher and xDS pushes queue behind
 * each other, so the newest config wins); a failed one keeps the previous config and is remembered
 * for `/rlconfig`, the log and `tollgate_config_last_reload_successful`.
 */
import { describeRules, rulesOf } from "./config/describe.js";
import { ConfigError, formatProblem } from "./config/errors.js";
import { describeRlqs } from "./config/sections/rlqs.js";
import { describeTiers } from "./config/sections/tiers.js";
import { loadServingConfig, type ServingConfig, type ValidationOptions } from "./config/serving.js";
import type { ConfigSource } from "./config/source.js";
import type { Clock, RuleSet } from "./engine/types.js";
import type { Logger } from "./logger.js";
import type { TollgateMetrics } from "./metrics/metrics.js";

/** Outcome of the last reload, shown on `/rlconfig`. */
export interface ReloadStatus {
  readonly at: Date;
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/** What a reload answers. */
export type ReloadAnswer = { ok: true } | { ok: false; problems: string[] };

/** Options of {@link loadConfigState}. */
export interface ConfigStateOptions {
  /** Where the config comes from (`--config` files or `--xds-server`). */
  readonly source: ConfigSource;
  /** The settings the config is validated with (`validationOptionsOf(settings)`). */
  readonly validation: ValidationOptions;
  readonly clock: Clock;
  readonly metrics: TollgateMetrics;
  readonly logger: Logger;
}

/** The served config and its reloads. */
export interface ConfigState {
  current(): ServingConfig;
  reload(): Promise<ReloadAnswer>;
  lastReload(): ReloadStatus | undefined;
  /** `/rlconfig`: the rules, the tiers and how the last reload went. */
  describe(): string[];
}

/**
 * Produce the first config through the source (throws ConfigError on bad files; xDS waits for a
 * push that validates) and return the state that reloads it.
 */
export async function loadConfigState(o: ConfigStateOptions): Promise<ConfigState> {
  const loadAll = () => loadServingConfig(o.source.read, o.validation);
  const counts = (l: ServingConfig) => ({
    domains: l.rules.domains.size,
    files: l.rules.files.length,
    tenants: l.tiers.tenants.size,
  });
  const loaded = (l: ServingConfig) => {
    o.metrics.reload("success");
    exportAtZero(l.rules, o.metrics);
  };

  let current = await o.source.first(loadAll);
  loaded(current);
  o.logger.info({ config: o.source.name, ...counts(current) }, "config loaded");

  let last: ReloadStatus | undefined;
  const reloadOnce = async (): Promise<ReloadAnswer> => {
    try {
      current = await loadAll();
      loaded(current);
      last = { at: new Date(o.clock.now()), ok: true, problems: [] };
      o.logger.info(counts(current), "config reloaded");
      return { ok: true };
    } catch (err) {
      o.metrics.reload("failure");
      const problems = err instanceof ConfigError ? err.problems.map(formatProblem) : [String(err)];
      last = { at: new Date(o.clock.now()), ok: false, problems };
      o.logger.error({ problems }, "config reload failed; keeping the previous rules");
      return { ok: false, problems };
    }
  };
  let reloading: Promise<unknown> = Promise.resolve();
  return {
    current: () => current,
    reload() {
      const next = reloading.then(reloadOnce);
      reloading = next;
      return next;
    },
    lastReload: () => last,
    describe() {
      const lines = [
        ...describeRules(current.rules),
        ...describeTiers(current.tiers),
        ...describeRlqs(current.rlqs),
      ];
      if (last === undefined) return lines;
      const when = `${last.ok ? "ok" : "FAILED, serving the previous rules"} at ${last.at.toISOString()}`;
      return [...lines, `# last reload: ${when}`, ...last.problems.map((p) => `#   ${p}`)];
    },
  };
}

/** The decision series alerts read, at 0 before the first decision: each rule's ok/over_limit, each domain's no_match. */
function exportAtZero(rules: RuleSet, metrics: TollgateMetrics): void {
  for (const domain of rules.domains.values()) {
    metrics.decisionsAtZero(domain.domain, "", ["no_match"]);
    for (const rule of rulesOf(domain.root))
      if (rule.limits.length > 0) metrics.decisionsAtZero(domain.domain, rule.path, ["ok", "over_limit"]);
  }
}
