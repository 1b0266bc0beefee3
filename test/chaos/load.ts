/**
 * Steady open-loop load for chaos tests: one call every `everyMs` on a fixed schedule (a slow answer
 * never delays the next send), each answer recorded with its send time relative to the start, so a
 * test can cut the record at the moment it killed something. Plus small helpers to wait on a
 * condition and to read the guard status a service prints on `/rlconfig`.
 */
import type { Service } from "../helpers/service.js";
import type { Answer, Entries, RlsClient } from "./rls-client.js";

/** One request of the load: which domain and descriptors the i-th send uses, and a label to group by. */
export interface Shot {
  readonly label: string;
  readonly domain: string;
  readonly descriptors: readonly Entries[];
}

/** An answer with its label and send time in ms since the load started. */
export interface Record extends Answer {
  readonly label: string;
  readonly at: number;
}

/** A running load; `stop()` ends the sends and resolves with every answer once all have arrived. */
export interface Load {
  /** Milliseconds since the load started. */
  now(): number;
  stop(): Promise<Record[]>;
}

/** Start sending `shot(i)` through `clients` (round-robin) every `everyMs` milliseconds. */
export function steadyLoad(opts: {
  readonly clients: readonly RlsClient[];
  readonly everyMs: number;
  readonly shot: (i: number) => Shot;
  readonly deadlineMs?: number;
}): Load {
  const start = performance.now();
  const pending: Promise<Record>[] = [];
  let i = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (stopped) return;
    // Catch up on every slot that is due, then sleep until the next one: a fixed rate, not a fixed gap.
    while (start + i * opts.everyMs <= performance.now()) {
      const s = opts.shot(i);
      const client = opts.clients[i % opts.clients.length];
      if (client === undefined) throw new Error("steadyLoad needs at least one client");
      const call = client.call(s.domain, s.descriptors, { deadlineMs: opts.deadlineMs ?? 1000 });
      pending.push(call.then((a) => ({ ...a, label: s.label, at: a.sentAt - start })));
      i++;
    }
    timer = setTimeout(tick, Math.max(0, start + i * opts.everyMs - performance.now()));
  };
  tick();
  return {
    now: () => performance.now() - start,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      return Promise.all(pending);
    },
  };
}

/** Resolve after `ms` of real time (chaos tests only: they measure a real outage). */
export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll `check` every 20 ms until it is true; false after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await pause(20);
  }
  return false;
}

/** The guard status JSON from the `# store: …` line of `/rlconfig`. */
export async function guardStatus(svc: Service): Promise<{ state: string; instances: number; kind: string }> {
  const text = await (await svc.http("/rlconfig")).text();
  const line = text.split("\n").find((l) => l.startsWith("# store: "));
  if (line === undefined) throw new Error(`no store line on /rlconfig:\n${text}`);
  return JSON.parse(line.slice("# store: ".length)) as { state: string; instances: number; kind: string };
}

/** Nearest-rank percentile of `values` (0–100). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}
