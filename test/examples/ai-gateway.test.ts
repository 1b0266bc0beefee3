/**
 * The AI-gateway example (docs/quotas.md): envoy/ai-gateway.yaml decodes as an Envoy Bootstrap with
 * the rate limit fields of Envoy 1.33–1.38 (added to the test's copy of the official protos), its
 * descriptors meet the rules of config/ai.yaml, envoy/gateway/ai-gateway.yaml asks for the same
 * costs and limits, and tollgate serves the flow: check at hits_addend 0, charge at stream end,
 * the monthly quota resetting at the next 1st 00:00 Europe/Berlin.
 */
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { describeRules } from "../../src/config/describe.js";
import { FULL_SCHEMA } from "../../src/config/full-schema.js";
import { loadConfig } from "../../src/config/load.js";
import { computeCalendarWindow } from "../../src/engine/calendar.js";
import { loadSettings } from "../../src/settings.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import {
  asArray,
  asObject,
  at,
  descriptors,
  type Req,
  repo,
  selectRoute,
  yamlDocuments,
  yamlFile,
} from "./files.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
const TOKENS = "%DYNAMIC_METADATA(io.envoy.ai_gateway:llm_total_token)%";
const CHAT: Req = { method: "POST", path: "/v1/chat/completions", headers: { "x-tenant-id": "acme" } };
const RESERVED: Req = { ...CHAT, path: "/v1/reserved/chat/completions" };
let bootstrap: JsonObject;

beforeAll(async () => {
  await envoyRegistry();
  bootstrap = await yamlFile("envoy/ai-gateway.yaml");
}, 120_000);

const hcm = () =>
  at(bootstrap, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0, "typed_config");
const rateLimitsFor = (req: Req) =>
  asArray(
    at(
      selectRoute(asArray(at(hcm(), "route_config", "virtual_hosts", 0, "routes"), "routes"), req),
      "route",
      "rate_limits",
    ),
    "rate_limits",
  );

describe("envoy/ai-gateway.yaml", () => {
  it("decodes as an Envoy v3 Bootstrap, hits_addend, apply_on_stream_done and is_negative_hits included", async () => {
    await expect(decodeEnvoyJson(BOOTSTRAP, bootstrap)).resolves.toBeDefined();
  });

  it("is rejected when a rate limit field is misspelled", async () => {
    const typo = structuredClone(bootstrap) as JsonValue;
    const rl = asObject(
      at(
        typo,
        "static_resources",
        "listeners",
        0,
        "filter_chains",
        0,
        "filters",
        0,
        "typed_config",
        "route_config",
        "virtual_hosts",
        0,
        "routes",
        1,
        "route",
        "rate_limits",
        2,
      ),
      "rl",
    );
    rl.apply_on_stream_don = true;
    delete rl.apply_on_stream_done;
    await expect(decodeEnvoyJson(BOOTSTRAP, typo)).rejects.toThrow(/apply_on_stream_don/);
  });

  it("checks every budget at request time (hits_addend 0) and charges the total tokens at stream end", () => {
    const rateLimits = rateLimitsFor(CHAT);
    const requestTime = rateLimits.filter((rl) => asObject(rl, "rl").apply_on_stream_done !== true);
    const streamDone = rateLimits.filter((rl) => asObject(rl, "rl").apply_on_stream_done === true);
    expect(requestTime.map((rl) => at(rl, "hits_addend"))).toEqual([{ number: 0 }, { number: 0 }]);
    expect(streamDone.map((rl) => at(rl, "hits_addend"))).toEqual([{ format: TOKENS }, { format: TOKENS }]);
    const budgets = [
      ["tenant=acme", "budget=tokens_per_minute"],
      ["tenant=acme", "budget=tokens_per_month"],
    ];
    expect(descriptors(requestTime, CHAT)).toEqual(budgets);
    expect(descriptors(streamDone, CHAT)).toEqual(budgets);
  });

  it("reserves max_tokens, then returns the reservation and charges the tokens used in one stream-done call", () => {
    const rateLimits = rateLimitsFor(RESERVED);
    expect(
      rateLimits.map((rl) => [asObject(rl, "rl").apply_on_stream_done === true, at(rl, "hits_addend")]),
    ).toEqual([
      [false, { format: "%REQ(x-max-tokens)%" }],
      [true, { format: "%REQ(x-max-tokens)%", is_negative_hits: true }],
      [true, { format: TOKENS }],
    ]);
    expect(new Set(descriptors(rateLimits, RESERVED).map((d) => d.join(",")))).toEqual(
      new Set(["tenant=acme,budget=tokens_per_minute"]),
    );
  });

  it("asks domain ai, whose rules are in config/ai.yaml: a token budget and a Berlin calendar month", async () => {
    const rl = at(asArray(at(hcm(), "http_filters"), "filters")[0], "typed_config");
    expect(at(rl, "domain")).toBe("ai");
    const rules = describeRules((await loadConfig(join(repo, "config"), { schema: FULL_SCHEMA })).ruleSet);
    expect(rules).toContain(
      "ai.tenant.budget_tokens_per_minute: 100000/minute gcra name=tokens_per_minute overdraft max_debt 2000000",
    );
    expect(rules).toContain(
      "ai.tenant.budget_tokens_per_month: 20000000/month fixed_window calendar Europe/Berlin name=tokens_per_month",
    );
  });
});

describe("envoy/gateway/ai-gateway.yaml", () => {
  it("stores the total tokens where the route reads them and charges them only at stream end", async () => {
    const [route, policy] = await yamlDocuments("envoy/gateway/ai-gateway.yaml");
    expect(at(route, "kind")).toBe("AIGatewayRoute");
    expect(asArray(at(route, "spec", "llmRequestCosts"), "costs")).toContainEqual({
      metadataKey: "llm_total_token",
      type: "TotalToken",
    });
    expect(at(policy, "kind")).toBe("BackendTrafficPolicy");
    const rules = asArray(at(policy, "spec", "rateLimit", "global", "rules"), "rules");
    expect(rules.map((r) => at(r, "limit"))).toEqual([
      { requests: 100000, unit: "Minute" },
      { requests: 20000000, unit: "Month" },
    ]);
    for (const r of rules) {
      expect(at(r, "cost", "request")).toEqual({ from: "Number", number: 0 });
      const md = at(r, "cost", "response", "metadata");
      expect(`%DYNAMIC_METADATA(${at(md, "namespace")}:${at(md, "key")})%`).toBe(TOKENS);
    }
  });
});

describe("the AI flow through tollgate on config/", () => {
  let app: App;
  beforeAll(async () => {
    const settings = loadSettings(
      ["--config", join(repo, "config"), "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"],
      {},
    );
    app = await startApp(settings, pino({ level: "silent" }));
  });
  afterAll(async () => {
    await app?.shutdown();
  });

  const decide = async (hits: number) => {
    const res = await fetch(`http://127.0.0.1:${app.httpAddress.port}/json`, {
      method: "POST",
      body: JSON.stringify({
        domain: "ai",
        descriptors: ["tokens_per_minute", "tokens_per_month"].map((b) => ({
          entries: [
            { key: "tenant", value: "acme" },
            { key: "budget", value: b },
          ],
          hitsAddend: hits,
        })),
      }),
    });
    return (await res.json()) as {
      overallCode: string;
      statuses: { limitRemaining?: number; durationUntilReset?: string }[];
    };
  };

  it("a check charges nothing, the stream-done charge lands, and the month resets on the 1st in Berlin", async () => {
    const check = await decide(0);
    expect(check.overallCode).toBe("OK");
    expect(check.statuses.map((s) => s.limitRemaining)).toEqual([100000, 20000000]);
    expect((await decide(1200)).overallCode).toBe("OK");
    const after = await decide(0);
    // The minute budget refills continuously (GCRA, ~1,667 tokens a second); the month does not.
    const [minute = 0, month] = after.statuses.map((s) => s.limitRemaining);
    expect(minute).toBeGreaterThanOrEqual(98800);
    expect(minute).toBeLessThan(98800 + 1667);
    expect(month).toBe(20000000 - 1200);
    const now = Date.now();
    const monthEnd = computeCalendarWindow(now, { unit: "month", timeZone: "Europe/Berlin" }).endMs;
    const resetSec = Number.parseFloat(after.statuses[1]?.durationUntilReset ?? "NaN");
    expect(Math.abs(resetSec - (monthEnd - now) / 1000)).toBeLessThanOrEqual(2);
  });
});
