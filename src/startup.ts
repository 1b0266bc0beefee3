/**
 * Startup as named steps with one cleanup path. Each step opens something (a store, a listening
 * server, a file watcher) and hands back how to close it; when a later step fails, everything opened
 * so far is closed in reverse order, each close bounded in time, and the failure is rethrown as a
 * {@link StartupError} naming the step. Shutdown closes the same list in the same reverse order, so a
 * process never half-starts and never half-stops.
 */
import type { AddressInfo } from "node:net";

/** What a step opened: its value, and how to close it (omitted when there is nothing to close). */
export interface Opened<T> {
  readonly value: T;
  readonly close?: () => Promise<void> | void;
  /** Longest the close may take before it is given up on (logged, not waited for). @default 5000 */
  readonly closeWithinMs?: number;
}

/** A startup step failed: `step` names it, `cause` is what it threw. */
export class StartupError extends Error {
  readonly step: string;
  constructor(step: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`startup step "${step}" failed: ${why}`, { cause });
    this.name = "StartupError";
    this.step = step;
  }
}

/** How one close went (in close order). */
export interface Closed {
  readonly step: string;
  readonly ok: boolean;
  /** The close threw this, or did not finish within its bound (`timedOut`). */
  readonly error?: unknown;
  readonly timedOut?: boolean;
}

/** Runs named steps and closes what they opened, last first. */
export class Startup {
  readonly #opened: { step: string; close: () => Promise<void> | void; withinMs: number }[] = [];
  readonly #defaultCloseMs: number;
  #closing: Promise<Closed[]> | undefined;

  constructor(options: { readonly closeWithinMs?: number } = {}) {
    this.#defaultCloseMs = options.closeWithinMs ?? 5_000;
  }

  /** Steps whose close is pending, in the order they opened. */
  get open(): readonly string[] {
    return this.#opened.map((o) => o.step);
  }

  /** Run step `name`; on failure throw a StartupError naming it (the caller then calls `close`). */
  async step<T>(name: string, run: () => Promise<Opened<T>> | Opened<T>): Promise<T> {
    let opened: Opened<T>;
    try {
      opened = await run();
    } catch (err) {
      throw err instanceof StartupError ? err : new StartupError(name, err);
    }
    if (opened.close !== undefined)
      this.#opened.push({
        step: name,
        close: opened.close,
        withinMs: opened.closeWithinMs ?? this.#defaultCloseMs,
      });
    return opened.value;
  }

  /**
   * Close everything opened, last first, each within its bound; never throws. A second call gets
   * the first call's result.
   */
  close(): Promise<Closed[]> {
    this.#closing ??= (async () => {
      const results: Closed[] = [];
      for (const o of this.#opened.reverse()) results.push(await closeOne(o.step, o.close, o.withinMs));
      this.#opened.length = 0;
      return results;
    })();
    return this.#closing;
  }
}

async function closeOne(step: string, close: () => Promise<void> | void, withinMs: number): Promise<Closed> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Closed>((resolve) => {
    timer = setTimeout(() => resolve({ step, ok: false, timedOut: true }), withinMs);
    timer.unref();
  });
  const done = (async (): Promise<Closed> => {
    try {
      await close();
      return { step, ok: true };
    } catch (error) {
      return { step, ok: false, error };
    }
  })();
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Listen, or close the server (timers, sockets) and rethrow when the address cannot be bound. */
export async function listenOrClose(
  server: { listen(host: string, port: number): Promise<AddressInfo>; close(): Promise<void> },
  addr: { readonly host: string; readonly port: number },
): Promise<AddressInfo> {
  try {
    return await server.listen(addr.host, addr.port);
  } catch (err) {
    await server.close().catch(() => {});
    throw err;
  }
}
