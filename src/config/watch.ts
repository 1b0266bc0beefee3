/**
 * Watches the config path and the tenants file and calls `onChange` once per settled change.
 *
 * - Events: `fs.watch` on each directory path, and on the parent directory of each file path, so
 *   that editors that write a new file and rename it over the old one, and Kubernetes ConfigMap
 *   updates (a new `..2026_…` directory, then `..data` renamed over the old symlink), are seen.
 * - Polling (`pollMs`, a fallback where events are lost: NFS, some container runtimes, nested
 *   directories, which are not watched by events): every tick looks again.
 * - Debounce: each event or tick (re)starts a `debounceMs` timer; when it fires, a fingerprint of
 *   every config file (real path, inode, size, mtime) is compared with the last one, and only a
 *   different fingerprint calls `onChange`. So a burst of writes is one reload, and events about
 *   unrelated files in the same directory cost a few `stat` calls and no reload.
 * - Changes that arrive while `onChange` runs are checked again after it returns.
 */
import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";
import { fingerprint } from "./fingerprint.js";

/** Options of {@link watchConfig}. */
export interface WatchOptions {
  /** Files or directories (a directory is read recursively, like `loadConfig`). */
  readonly paths: readonly string[];
  /** Quiet time after the last event before looking, in ms. */
  readonly debounceMs: number;
  /** Also look every `pollMs` ms; 0 = events only. */
  readonly pollMs: number;
  /** Use file system events; false = polling only. @default true */
  readonly events?: boolean;
  /** Called once per settled change; awaited before the next check. */
  readonly onChange: () => unknown;
  /** A watcher or fingerprint failure (the watcher keeps polling). */
  readonly onError?: (err: unknown) => void;
}

/** A running watcher. */
export interface ConfigWatcher {
  /** Resolves once the initial fingerprint is taken (changes after this are seen). */
  readonly ready: Promise<void>;
  /** Look now, without debounce; resolves after any `onChange` it caused. */
  check(): Promise<void>;
  /** Stop watching and polling; idempotent. */
  close(): void;
}

/** Start watching `paths`; see the module comment. */
export function watchConfig(opts: WatchOptions): ConfigWatcher {
  const watchers: FSWatcher[] = [];
  let last: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const onError = (err: unknown) => opts.onError?.(err);

  async function look(): Promise<void> {
    do {
      again = false;
      const now = await fingerprint(opts.paths);
      if (closed || now === last) continue;
      last = now;
      await opts.onChange();
    } while (again && !closed);
  }

  function check(): Promise<void> {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = look()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const kick = () => {
    if (closed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void check();
    }, opts.debounceMs);
    timer.unref();
  };

  const ready = fingerprint(opts.paths).then(
    (fp) => {
      last ??= fp;
    },
    (err: unknown) => onError(err),
  );
  if (opts.events !== false) {
    for (const dir of new Set(opts.paths.flatMap((p) => [p, dirname(p)]))) {
      try {
        const w = watch(dir, { persistent: false }, kick);
        w.on("error", onError);
        watchers.push(w);
      } catch (err) {
        onError(err); // e.g. a file path given where the parent is watched: polling still covers it
      }
    }
  }
  const poll = opts.pollMs > 0 ? setInterval(kick, opts.pollMs) : undefined;
  poll?.unref();

  return {
    ready,
    check,
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      if (poll !== undefined) clearInterval(poll);
      for (const w of watchers) w.close();
    },
  };
}
