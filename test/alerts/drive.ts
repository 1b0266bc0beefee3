/** Driving a running tollgate step by step while a ScrapeRecorder scrapes it once per step. */
import type { Service } from "../helpers/service.js";
import type { ScrapeRecorder } from "./scrapes.js";

/**
 * `n` steps: run `action(i)` (the traffic of that minute), then scrape the HTTP port, and with
 * `also.debug` the debug listener's port (`--debug-addr`) into that second recorder too.
 */
export async function steps(
  rec: ScrapeRecorder,
  svc: Service,
  n: number,
  action: (i: number) => Promise<unknown> = async () => {},
  also: { readonly debug?: ScrapeRecorder } = {},
): Promise<void> {
  for (let i = 0; i < n; i++) {
    await action(i);
    await rec.scrape(`http://127.0.0.1:${svc.httpPort}/metrics`);
    if (also.debug !== undefined) {
      if (svc.debugPort === undefined) throw new Error("the service has no debug listener (--debug-addr)");
      await also.debug.scrape(`http://127.0.0.1:${svc.debugPort}/metrics`);
    }
  }
}

/** Poll `check` every 50 ms until it holds; fail after `ms` naming `what`. */
export async function waitFor(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The value of one series on the service's /metrics now (undefined when absent). */
export async function metricNow(svc: Service, series: string): Promise<number | undefined> {
  const text = await (await svc.http("/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
