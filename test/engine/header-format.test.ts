import { describe, expect, it } from "vitest";
import { bindingStatus, type HeaderStatus, rateLimitHeaders } from "../../src/engine/headers.js";

const status = (name: string | undefined, extra: Partial<HeaderStatus> = {}): HeaderStatus => ({
  limit: { requestsPerUnit: 10, unit: "minute", name },
  remaining: 4,
  resetSec: 6,
  over: false,
  enforcedOver: false,
  ...extra,
});
const opts = { nowMs: 1_700_000_000_500, jitterSec: 0, random: () => 0 };
const asMap = (h: readonly { key: string; value: string }[]) =>
  Object.fromEntries(h.map((x) => [x.key, x.value]));

describe("header formats", () => {
  it("bind to the enforced denial with the longest wait over any OK status", () => {
    const a = status("a", { remaining: 0 });
    const b = status("b", { over: true, enforcedOver: true, remaining: 0, resetSec: 3 });
    const c = status("c", { over: true, enforcedOver: true, remaining: 0, resetSec: 9 });
    expect(bindingStatus([a, b, c])).toBe(c);
    expect(bindingStatus([status("x", { remaining: 7 }), a])).toBe(a);
  });

  it("legacy: epoch reset from the injected clock and Retry-After only on an enforced denial", () => {
    const shadowOver = status("s", { over: true, remaining: 0, resetSec: 30 });
    const ok = asMap(rateLimitHeaders([shadowOver], { ...opts, format: "legacy" }));
    expect(ok).toEqual({
      "X-RateLimit-Limit": "10",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": "1700000031",
    });
    const denied = rateLimitHeaders([{ ...shadowOver, enforcedOver: true }], { ...opts, format: "legacy" });
    expect(asMap(denied)["Retry-After"]).toBe("30");
  });

  it("send Retry-After of at least one second", () => {
    const h = rateLimitHeaders([status("a", { over: true, enforcedOver: true, resetSec: 0 })], {
      ...opts,
      format: "ietf",
    });
    expect(asMap(h)["Retry-After"]).toBe("1");
  });

  it("draft03: every policy listed after the binding limit, quotes in names escaped", () => {
    const h = rateLimitHeaders(
      [
        status('we"ird\\'),
        status(undefined, { limit: { requestsPerUnit: 5, unit: "second", name: undefined }, remaining: 1 }),
      ],
      { ...opts, format: "draft03" },
    );
    expect(asMap(h)).toEqual({
      "X-RateLimit-Limit": '5, 10;w=60;name="we\\"ird\\\\", 5;w=1',
      "X-RateLimit-Remaining": "1",
      "X-RateLimit-Reset": "6",
    });
  });

  it("ietf: an unnamed limit gets a policy name from its rate, non-ASCII dropped from names", () => {
    expect(asMap(rateLimitHeaders([status(undefined)], { ...opts, format: "ietf" }))).toEqual({
      "RateLimit-Policy": '"10_per_minute";q=10;w=60',
      RateLimit: '"10_per_minute";r=4;t=6',
    });
    const named = asMap(rateLimitHeaders([status("tenänt")], { ...opts, format: "ietf" }));
    expect(named["RateLimit-Policy"]).toBe('"tennt";q=10;w=60');
  });

  it("ietf: lists every matched policy once, binding first, and reports the binding one", () => {
    const tight = status("tight", { remaining: 1, resetSec: 2 });
    const h = asMap(rateLimitHeaders([status("wide"), tight, status("wide")], { ...opts, format: "ietf" }));
    expect(h).toEqual({
      "RateLimit-Policy": '"tight";q=10;w=60, "wide";q=10;w=60',
      RateLimit: '"tight";r=1;t=2',
    });
  });

  it("off, or no limited status: no headers", () => {
    expect(
      rateLimitHeaders([status("a", { over: true, enforcedOver: true })], { ...opts, format: "off" }),
    ).toEqual([]);
    expect(rateLimitHeaders([], { ...opts, format: "legacy" })).toEqual([]);
  });
});
