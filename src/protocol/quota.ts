/**
 * The quota API on the HTTP port:
 *
 * - `GET /v1/quota?domain=D&descriptor=k=v,k2=v2[&descriptor=…]` peeks: the engine decides the
 *   query with a per-descriptor `hits_addend` of 0, which reads every bucket and charges nothing,
 *   and answers limit, remaining and reset per descriptor.
 * - `POST /v1/reset` with the same selector refills the buckets the engine would charge for it
 *   (every limit and shard). It needs `Authorization: Bearer <token>` equal to the admin-token
 *   setting (compared in constant time over SHA-256 digests) and answers 404 with the reason when no
 *   token is configured.
 *
 * A descriptor selector is `key=value` pairs separated by `,` (split at the first `=`), so keys and
 * values cannot contain `,`, and keys cannot contain `=`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Entry, QueryDescriptor, RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import { StoreError } from "../store/store.js";
import type { QueryBounds } from "./codec.js";
import type { HttpReply, HttpRequest, Route } from "./http.js";
import { limitJson } from "./limit-json.js";

/** What the quota routes need from the app. */
export interface QuotaDeps {
  /** Decide a query (the engine); called with hits_addend 0 on every descriptor. */
  readonly decide: (q: RateLimitQuery) => Promise<RateLimitAnswer>;
  /** The bucket keys the engine would charge for a query (`Engine.bucketKeys`). */
  readonly bucketKeys: (q: RateLimitQuery) => string[];
  /** Delete buckets so they are full again (`Store.reset`). */
  readonly reset: (keys: readonly string[]) => Promise<void>;
  /** Bearer token of `POST /v1/reset` (setting `--admin-token`); empty disables it. */
  readonly adminToken: string;
  readonly bounds: QueryBounds;
  /** The tier serving a descriptor, reported when tiers apply. */
  readonly tierOf?: (domain: string, entries: readonly Entry[]) => string | undefined;
}

const json = (status: number, value: unknown): HttpReply => ({
  status,
  body: `${JSON.stringify(value)}\n`,
  contentType: "application/json",
});
const failure = (status: number, error: string) => json(status, { error });

class BadSelector extends Error {}

function entriesOf(text: string, bounds: QueryBounds): Entry[] {
  const entries = text.split(",").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new BadSelector(`descriptor entry ${JSON.stringify(pair)} is not key=value`);
    return { key: pair.slice(0, eq), value: pair.slice(eq + 1) };
  });
  if (entries.length > bounds.maxEntries)
    throw new BadSelector(`descriptor has ${entries.length} entries, more than ${bounds.maxEntries}`);
  for (const e of [...entries.map((x) => x.key), ...entries.map((x) => x.value)]) {
    if (Buffer.byteLength(e) > bounds.maxKeyValueBytes)
      throw new BadSelector(`descriptor text longer than ${bounds.maxKeyValueBytes} bytes`);
  }
  return entries;
}

/** The selector of a request as a check-only query (hits_addend 0 on every descriptor). */
export function selectorQuery(url: URL, bounds: QueryBounds): RateLimitQuery {
  const domain = url.searchParams.get("domain") ?? "";
  if (domain === "") throw new BadSelector("missing domain (e.g. ?domain=edge&descriptor=tenant=acme)");
  const texts = url.searchParams.getAll("descriptor");
  if (texts.length === 0)
    throw new BadSelector("missing descriptor (e.g. descriptor=tenant=acme,route_class=read)");
  if (texts.length > bounds.maxDescriptors)
    throw new BadSelector(`${texts.length} descriptors, more than ${bounds.maxDescriptors}`);
  const descriptors: QueryDescriptor[] = texts.map((t) => ({
    entries: entriesOf(t, bounds),
    limit: undefined,
    hitsAddend: 0,
  }));
  return { domain, descriptors, hitsAddend: 0 };
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time bearer check: equal-length SHA-256 digests compared with timingSafeEqual. */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  const value = typeof header === "string" ? header : "";
  const given = value.startsWith("Bearer ") ? value.slice(7).trim() : "";
  return timingSafeEqual(digest(given), digest(token)) && given !== "";
}

async function guarded(
  req: HttpRequest,
  bounds: QueryBounds,
  run: (q: RateLimitQuery) => Promise<HttpReply>,
) {
  let q: RateLimitQuery;
  try {
    q = selectorQuery(req.url, bounds);
  } catch (err) {
    if (err instanceof BadSelector) return failure(400, err.message);
    throw err;
  }
  try {
    return await run(q);
  } catch (err) {
    if (err instanceof StoreError) return failure(503, `rate limit store unavailable (${err.code})`);
    throw err;
  }
}

/** `GET /v1/quota` and `POST /v1/reset`, to merge into the HTTP routes. */
export function quotaRoutes(deps: QuotaDeps): Map<string, Route> {
  const routes = new Map<string, Route>();
  routes.set("GET /v1/quota", (req) =>
    guarded(req, deps.bounds, async (q) => {
      const answer = await deps.decide(q);
      const descriptors = q.descriptors.map((d, i) => {
        const s = answer.statuses[i];
        const tier = deps.tierOf?.(q.domain, d.entries);
        return {
          entries: Object.fromEntries(d.entries.map((e) => [e.key, e.value])),
          ...(tier === undefined ? {} : { tier }),
          code: s?.code ?? "OK",
          limit: s?.currentLimit === undefined ? null : limitJson(s.currentLimit),
          remaining: s?.currentLimit === undefined ? null : s.limitRemaining,
          resetSeconds: s?.durationUntilResetSec ?? null,
        };
      });
      return json(200, { domain: q.domain, descriptors });
    }),
  );
  routes.set("POST /v1/reset", (req) => {
    if (deps.adminToken === "")
      return failure(404, "reset is disabled: set --admin-token (TOLLGATE_ADMIN_TOKEN) to enable it");
    if (!bearerMatches(req.headers.authorization, deps.adminToken))
      return { ...failure(401, "missing or wrong bearer token"), headers: { "www-authenticate": "Bearer" } };
    return guarded(req, deps.bounds, async (q) => {
      const keys = deps.bucketKeys(q);
      if (keys.length > 0) await deps.reset(keys);
      return json(200, { domain: q.domain, reset: keys.length });
    });
  });
  return routes;
}
