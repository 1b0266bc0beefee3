import { describe, expect, it } from "vitest";
import { desc, engineFor, query } from "./engine-fixture.js";

const RULES = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 2, name: per_tenant }
  - key: ip
    rate_limit: { unit: second, requests_per_unit: 10 }
`;

const headerMap = (h: readonly { key: string; value: string }[]) =>
  Object.fromEntries(h.map((x) => [x.key, x.value]));

describe("response headers", () => {
  it("legacy: limit, remaining and epoch reset of the binding status, Retry-After only when denied", async () => {
    const { engine, clock } = engineFor(RULES);
    const nowSec = Math.ceil(clock.now() / 1000);
    const ok = await engine.shouldRateLimit(query("edge", [desc("tenant=a"), desc("ip=1")]));
    expect(headerMap(ok.responseHeaders)).toEqual({
      "X-RateLimit-Limit": "2",
      "X-RateLimit-Remaining": "1",
      "X-RateLimit-Reset": String(nowSec + 30), // GCRA: one token back in 60 s / 2,
    });
    await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    const over = await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    expect(headerMap(over.responseHeaders)).toMatchObject({
      "X-RateLimit-Remaining": "0",
      "Retry-After": "30",
    });
  });

  it("adds no headers when nothing matched a limit", async () => {
    const { engine } = engineFor(RULES);
    const r = await engine.shouldRateLimit(query("edge", [desc("other=x")]));
    expect(r.responseHeaders).toEqual([]);
  });

  it("draft03: Envoy's quota policy list and delta-seconds reset", async () => {
    const { engine } = engineFor(RULES, { headers: "draft03" });
    const r = await engine.shouldRateLimit(query("edge", [desc("tenant=a"), desc("ip=1")]));
    expect(headerMap(r.responseHeaders)).toEqual({
      "X-RateLimit-Limit": '2, 2;w=60;name="per_tenant", 10;w=1',
      "X-RateLimit-Remaining": "1",
      "X-RateLimit-Reset": "30",
    });
  });

  it("ietf: RateLimit-Policy and RateLimit structured fields", async () => {
    const { engine } = engineFor(RULES, { headers: "ietf" });
    const r = await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    expect(headerMap(r.responseHeaders)).toEqual({
      "RateLimit-Policy": '"per_tenant";q=2;w=60',
      RateLimit: '"per_tenant";r=1;t=30',
    });
  });

  it("off: no headers at all, even when denied", async () => {
    const { engine } = engineFor(RULES, { headers: "off" });
    for (let i = 0; i < 3; i++) {
      const r = await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
      expect(r.responseHeaders).toEqual([]);
    }
  });

  it("adds 0..N seconds of jitter to Retry-After", async () => {
    const { engine } = engineFor(RULES, { retryAfterJitterSec: 5, random: () => 0.99 });
    for (let i = 0; i < 2; i++) await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    const over = await engine.shouldRateLimit(query("edge", [desc("tenant=a")]));
    expect(headerMap(over.responseHeaders)["Retry-After"]).toBe("35");
  });
});
