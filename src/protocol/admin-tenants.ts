/**
 * The tenant admin API on the HTTP port (plan changes at runtime):
 *
 * - `PUT /v1/tenants/{tenant}` with `{"tier": "gold"}` sets the tenant's tier override;
 * - `GET /v1/tenants/{tenant}` answers its tier, override and tenants-file tier;
 * - `DELETE /v1/tenants/{tenant}` removes the override (the tenants file applies again).
 *
 * Each needs `Authorization: Bearer <admin token>` (setting `--admin-token`, as `POST /v1/reset`) and
 * is disabled (404 with the reason) without one. `{tenant}` is one path segment, percent-decoded.
 * Bodies are JSON (camelCase), at most {@link MAX_ADMIN_BODY_BYTES}. Every change is logged as one
 * audit line: who (the token and the peer address), tenant, old and new override.
 */
import { StoreError } from "../store/store.js";
import type { TenantTierState, TierChange } from "../tenant-tiers.js";
import type { HttpReply, HttpRequest, Route } from "./http.js";
import { bearerMatches } from "./quota.js";

/** Largest accepted body of `PUT /v1/tenants/{tenant}`. */
export const MAX_ADMIN_BODY_BYTES = 1024;

/** What the tenant admin routes need. */
export interface AdminTenantDeps {
  readonly tiers: TenantTierState;
  /** Bearer token (setting `--admin-token`); empty disables the routes. */
  readonly adminToken: string;
  /** Longest tenant id in bytes (the descriptor value bound, `--max-key-value-bytes`). */
  readonly maxTenantBytes: number;
  /** The audit log line of one change. */
  readonly audit: (
    change: TierChange & { readonly action: "set" | "delete"; readonly remote: string },
  ) => void;
}

/** The route pattern: one path segment after the prefix (http.ts matches `/*`). */
export const TENANTS_ROUTE = "/v1/tenants/*";

const json = (status: number, value: unknown): HttpReply => ({
  status,
  body: `${JSON.stringify(value)}\n`,
  contentType: "application/json",
});
const failure = (status: number, error: string) => json(status, { error });

class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function tenantOf(req: HttpRequest, maxBytes: number): string {
  const raw = req.url.pathname.slice(TENANTS_ROUTE.length - 1);
  let tenant: string;
  try {
    tenant = decodeURIComponent(raw);
  } catch {
    throw new BadRequest(400, `tenant ${JSON.stringify(raw)} is not valid percent-encoding`);
  }
  if (tenant === "") throw new BadRequest(400, "missing tenant (PUT /v1/tenants/{tenant})");
  if (Buffer.byteLength(tenant) > maxBytes) throw new BadRequest(400, `tenant longer than ${maxBytes} bytes`);
  return tenant;
}

function tierOf(body: string, known: readonly string[]): string {
  if (Buffer.byteLength(body) > MAX_ADMIN_BODY_BYTES)
    throw new BadRequest(413, `body larger than ${MAX_ADMIN_BODY_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new BadRequest(400, `body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const shape = 'body must be {"tier": "<name>"}';
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BadRequest(400, shape);
  const extra = Object.keys(value).filter((k) => k !== "tier");
  if (extra.length > 0) throw new BadRequest(400, `${shape}; unknown field ${JSON.stringify(extra[0])}`);
  const tier: unknown = (value as { tier?: unknown }).tier;
  if (typeof tier !== "string" || tier === "") throw new BadRequest(400, shape);
  if (!known.includes(tier))
    throw new BadRequest(
      400,
      `unknown tier ${JSON.stringify(tier)} (defined: ${known.length > 0 ? known.join(", ") : "none: no domain has a tiers section"})`,
    );
  return tier;
}

/** `PUT`, `GET` and `DELETE /v1/tenants/{tenant}`, to merge into the HTTP routes. */
export function adminTenantRoutes(deps: AdminTenantDeps): Map<string, Route> {
  const guarded =
    (run: (req: HttpRequest, tenant: string) => Promise<HttpReply>): Route =>
    async (req) => {
      if (deps.adminToken === "")
        return failure(404, "the tenant admin API is disabled: set --admin-token (TOLLGATE_ADMIN_TOKEN)");
      if (!bearerMatches(req.headers.authorization, deps.adminToken))
        return {
          ...failure(401, "missing or wrong bearer token"),
          headers: { "www-authenticate": "Bearer" },
        };
      try {
        return await run(req, tenantOf(req, deps.maxTenantBytes));
      } catch (err) {
        if (err instanceof BadRequest) return failure(err.status, err.message);
        if (err instanceof StoreError) return failure(503, `tenant override store unavailable (${err.code})`);
        throw err;
      }
    };
  const state = (tenant: string) => {
    const { override, file } = deps.tiers.lookup(tenant);
    return { tenant, tier: override ?? file ?? null, override: override ?? null, fileTier: file ?? null };
  };
  const routes = new Map<string, Route>();
  routes.set(
    `PUT ${TENANTS_ROUTE}`,
    guarded(async (req, tenant) => {
      const tier = tierOf(req.body, deps.tiers.known());
      const change = await deps.tiers.set(tenant, tier);
      deps.audit({ ...change, action: "set", remote: req.remoteAddress ?? "" });
      return json(200, { ...state(tenant), previousOverride: change.old ?? null, store: deps.tiers.kind });
    }),
  );
  routes.set(
    `GET ${TENANTS_ROUTE}`,
    guarded(async (_req, tenant) => json(200, { ...state(tenant), store: deps.tiers.kind })),
  );
  routes.set(
    `DELETE ${TENANTS_ROUTE}`,
    guarded(async (req, tenant) => {
      const change = await deps.tiers.delete(tenant);
      if (change.old === undefined)
        return failure(404, `tenant ${JSON.stringify(tenant)} has no tier override`);
      deps.audit({ ...change, action: "delete", remote: req.remoteAddress ?? "" });
      return json(200, { ...state(tenant), previousOverride: change.old, store: deps.tiers.kind });
    }),
  );
  return routes;
}
