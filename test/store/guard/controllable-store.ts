/**
 * A Store whose takes resolve, reject or hang on demand, for guard tests. Every call is recorded;
 * in `manual` mode a call stays pending until the test settles it.
 */
import { type Outcome, type Store, StoreError, type Take } from "../../../src/store/store.js";

export type Mode = "ok" | "fail" | "manual";

export interface Call {
  readonly takes: readonly Take[];
  resolve(outcomes?: Outcome[]): void;
  reject(err?: unknown): void;
}

/** The answer `ok` mode gives: allowed, remaining 42, so tests can tell it from a fallback answer. */
export function innerOutcomes(takes: readonly Take[]): Outcome[] {
  return takes.map(() => ({ allowed: true, remaining: 42, retryAfterMs: 0, resetAfterMs: 0 }));
}

export function connectionError(): StoreError {
  return new StoreError("redis take failed (connection): ECONNREFUSED", {
    code: "connection",
    transient: true,
  });
}

export class ControllableStore implements Store {
  readonly kind = "fake";
  mode: Mode = "ok";
  readonly calls: Call[] = [];
  resets = 0;

  take(takes: readonly Take[]): Promise<Outcome[]> {
    return new Promise<Outcome[]>((resolve, reject) => {
      const call: Call = {
        takes,
        resolve: (o) => resolve(o ?? innerOutcomes(takes)),
        reject: (e) => reject(e ?? connectionError()),
      };
      this.calls.push(call);
      if (this.mode === "ok") call.resolve();
      if (this.mode === "fail") call.reject();
    });
  }

  readonly refunds: (readonly Take[])[] = [];

  async refund(takes: readonly Take[]): Promise<void> {
    this.refunds.push(takes);
  }

  async reset(): Promise<void> {
    this.resets++;
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {}
}
