/**
 * The file config source: `--config` (a file or a directory) read by `loadConfig`, and watched with
 * the tenants file (`watchConfig`: file events, polling, debounce).
 */
import { loadConfig } from "./load.js";
import type { ConfigSource } from "./source.js";
import { type ConfigWatcher, watchConfig } from "./watch.js";

/** Options of {@link fileSource}. */
export interface FileSourceOptions {
  readonly path: string;
  /** Also watched (the tiers' tenants file); empty = none. */
  readonly tenantsPath: string;
  readonly debounceMs: number;
  readonly pollMs: number;
  readonly onError: (err: unknown) => void;
}

/** Config from files. */
export function fileSource(opts: FileSourceOptions): ConfigSource {
  let watcher: ConfigWatcher | undefined;
  return {
    name: opts.path,
    read: (parse) => loadConfig(opts.path, parse),
    first: (load) => load(),
    async watch(reload) {
      watcher = watchConfig({
        paths: opts.tenantsPath === "" ? [opts.path] : [opts.path, opts.tenantsPath],
        debounceMs: opts.debounceMs,
        pollMs: opts.pollMs,
        onChange: reload,
        onError: opts.onError,
      });
      await watcher.ready;
    },
    close: () => watcher?.close(),
  };
}
