import { describe, expect, it } from "vitest";
import type { LastError, Transition } from "../../../src/store/guard/breaker.js";
import { OutageLog } from "../../../src/store/guard/outage-log.js";

interface Line {
  readonly level: string;
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

function setup() {
  const lines: Line[] = [];
  const push = (level: string) => (obj: object, msg: string) =>
    lines.push({ level, obj: obj as Record<string, unknown>, msg });
  const log = new OutageLog({
    logger: { info: push("info"), warn: push("warn"), debug: push("debug") },
    defaultPolicy: "local",
    summaryEveryMs: 60_000,
  });
  return { lines, log };
}

const err = (message: string, at: number): LastError => ({ code: "connection", message, at });
const t = (
  from: Transition["from"],
  to: Transition["to"],
  at: number,
  lastError?: LastError,
): Transition => ({
  from,
  to,
  at,
  reason: to === "open" ? (from === "closed" ? "consecutive_failures" : "probe_failed") : "open_elapsed",
  openMs: to === "open" ? 1_000 : undefined,
  lastError,
});

describe("OutageLog", () => {
  it("writes one warn at the start, one info at the end and only debug for the probing cycle in between", () => {
    const { lines, log } = setup();
    log.transitioned(t("closed", "open", 0, err("ECONNREFUSED first", 0)));
    for (let s = 1; s <= 30; s++) {
      log.transitioned(t("open", "half_open", s * 1_000 - 500));
      log.transitioned(t("half_open", "open", s * 1_000, err(`ECONNREFUSED #${s}`, s * 1_000)));
    }
    log.transitioned(t("open", "half_open", 30_500));
    log.transitioned(t("half_open", "closed", 31_000));
    const loud = lines.filter((l) => l.level !== "debug");
    expect(loud.map((l) => l.level)).toEqual(["warn", "info"]);
    expect(loud[1]?.msg).toBe("store circuit breaker closed: decisions are back on the store after 31 s");
    expect(loud[1]?.obj).toMatchObject({
      outageMs: 31_000,
      failedProbes: 30,
      firstError: { message: "ECONNREFUSED first" },
      lastError: { message: "ECONNREFUSED #30" },
    });
    expect(lines.filter((l) => l.level === "debug")).toHaveLength(61);
  });

  it("summarises a long outage at most once a minute with the failed probes since the last summary", () => {
    const { lines, log } = setup();
    log.transitioned(t("closed", "open", 0, err("first", 0)));
    for (let s = 1; s <= 150; s++) {
      log.transitioned(t("open", "half_open", s * 1_000 - 500));
      log.transitioned(t("half_open", "open", s * 1_000, err(`#${s}`, s * 1_000)));
    }
    const warns = lines.filter((l) => l.level === "warn");
    expect(warns).toHaveLength(3);
    expect(warns[1]?.msg).toBe(
      "store still failing: 60 failed probe(s) in the last 60 s; decisions follow each rule's on_store_error policy",
    );
    expect(warns[1]?.obj).toMatchObject({
      failedProbes: 60,
      firstError: { message: "first" },
      lastError: { message: "#60" },
    });
    expect(warns[2]?.obj).toMatchObject({ failedProbes: 60, lastError: { message: "#120" } });
  });

  it("logs a breaker that closes without an outage at info and a stray half-open at debug", () => {
    const { lines, log } = setup();
    log.transitioned(t("open", "half_open", 0));
    log.transitioned(t("half_open", "closed", 10));
    expect(lines.map((l) => l.level)).toEqual(["debug", "info"]);
  });
});
