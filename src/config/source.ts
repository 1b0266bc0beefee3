/**
 * Where the config comes from: files (`--config`, watched) or an xDS server (`--xds-server`, pushed).
 * The app reads through a source and reloads when it says so; both kinds go through the same
 * validation (`loadServingConfig`) and the same atomic swap, and keep the previous rules when a new
 * config is invalid.
 */
import type { DocumentReader } from "./serving.js";

/** The outcome of one app reload, as the source needs it (xDS ACKs or NACKs with it). */
export type ReloadOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly problems: readonly string[] };

/** A config source. */
export interface ConfigSource {
  /** For logs: the path, or `xds://host:port`. */
  readonly name: string;
  /** Read and validate the config documents as they are now. Throws ConfigError. */
  readonly read: DocumentReader;
  /**
   * Produce the first config through `load` (which calls `read`). Files: one load, whose problems
   * stop the start. xDS: waits for the first push that loads (NACKing the ones that do not), or
   * loads the empty set at once when told to start without one.
   */
  first<T>(load: () => Promise<T>): Promise<T>;
  /** From now on, call `reload` on every change (serially) until closed. Resolves once watching. */
  watch(reload: () => Promise<ReloadOutcome>): Promise<void>;
  close(): void;
}
