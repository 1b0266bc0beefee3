/**
 * The xDS config source: the rules arrive as state-of-the-world pushes of `RateLimitConfig`
 * resources (Envoy Gateway's way of configuring envoyproxy/ratelimit). Each push is written out as
 * config documents and goes through the same validation and atomic swap as files (the app's reload);
 * a push that loads is ACKed, one that does not is NACKed with every problem, and the rules of the
 * last good push stay in force (a later reload, e.g. of the tenants file, reads them again).
 * Problems name the resource (`xds:NAME`) and the YAML path; lines are left out, as the documents
 * are generated.
 */
import { stringify } from "yaml";
import { buildRuleSet, type LoadResult, type ParseOptions, readDocument } from "./document.js";
import { ConfigError, type ConfigProblem, formatProblem } from "./errors.js";
import type { ConfigSource, ReloadOutcome } from "./source.js";
import { type ConfigWatcher, watchConfig } from "./watch.js";

/** One resource: its name and the config document it stands for (YAML shape). */
export interface ConfigResource {
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
}

/** A state-of-the-world update from a config server: every resource, to ACK or NACK. */
export interface ConfigPush {
  readonly version: string;
  readonly resources: readonly ConfigResource[];
  ack(): void;
  nack(message: string): void;
}

/** The server connection: delivers pushes until closed. */
export interface ConfigFeed {
  start(onPush: (push: ConfigPush) => void): void;
  close(): void;
}

/** Options of {@link xdsSource}. */
export interface XdsSourceOptions {
  /** For logs, e.g. `xds://controller:18001`. */
  readonly name: string;
  readonly feed: ConfigFeed;
  /** Serve the empty config until a first push loads, instead of waiting for it. */
  readonly forceStart: boolean;
  /** The tiers' tenants file, still read from disk and watched; empty = none. */
  readonly tenantsPath: string;
  readonly debounceMs: number;
  readonly pollMs: number;
  /** A push that did not load (it was NACKed with these problems). */
  readonly onRefused: (version: string, problems: readonly string[]) => void;
  readonly onError: (err: unknown) => void;
}

/** Parse pushed resources as config documents; throws ConfigError with every problem. */
export function parseResources(resources: readonly ConfigResource[], opts: ParseOptions): LoadResult {
  const problems: ConfigProblem[] = [];
  const documents = resources.map((r) => readDocument(`xds:${r.name}`, stringify(r.config), opts, problems));
  try {
    return buildRuleSet(documents, problems);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.problems.map((p) => ({ ...p, line: 0, column: 0 })));
  }
}

/** The NACK text of a failed load: its problems, one a line. */
function nackText(problems: readonly string[]): string {
  return problems.join("\n");
}

/** Config from an xDS server. */
export function xdsSource(opts: XdsSourceOptions): ConfigSource {
  let candidate: readonly ConfigResource[] = [];
  let lastGood: readonly ConfigResource[] = [];
  let closed = false;
  let watcher: ConfigWatcher | undefined;
  const queue: ConfigPush[] = [];
  let wake: (() => void) | undefined;
  opts.feed.start((push) => {
    queue.push(push);
    wake?.();
  });
  const next = async (): Promise<ConfigPush | undefined> => {
    while (queue.length === 0 && !closed)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    return closed ? undefined : queue.shift();
  };
  /** Try `push` through `apply`; ACK and keep it, or NACK and fall back to the last good set. */
  const settle = async (push: ConfigPush, apply: () => Promise<ReloadOutcome>): Promise<boolean> => {
    candidate = push.resources;
    const outcome = await apply();
    if (outcome.ok) {
      lastGood = candidate;
      push.ack();
      return true;
    }
    candidate = lastGood;
    opts.onRefused(push.version, outcome.problems);
    push.nack(nackText(outcome.problems));
    return false;
  };

  return {
    name: opts.name,
    read: async (parse) => parseResources(candidate, parse),
    async first(load) {
      if (opts.forceStart) return load();
      for (;;) {
        const push = await next();
        if (push === undefined) throw new Error("the xDS config source was closed before a config arrived");
        let result: Awaited<ReturnType<typeof load>> | undefined;
        const ok = await settle(push, async () => {
          try {
            result = await load();
            return { ok: true };
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            return { ok: false, problems: err.problems.map(formatProblem) };
          }
        });
        if (ok && result !== undefined) return result;
      }
    },
    async watch(reload) {
      void (async () => {
        for (let push = await next(); push !== undefined; push = await next()) await settle(push, reload);
      })().catch(opts.onError);
      if (opts.tenantsPath === "") return;
      watcher = watchConfig({
        paths: [opts.tenantsPath],
        debounceMs: opts.debounceMs,
        pollMs: opts.pollMs,
        onChange: reload,
        onError: opts.onError,
      });
      await watcher.ready;
    },
    close() {
      closed = true;
      wake?.();
      watcher?.close();
      opts.feed.close();
    },
  };
}
