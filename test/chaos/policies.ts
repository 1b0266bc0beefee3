/**
 * The config every chaos test serves: one domain per failure policy (`local`, `allow`, `deny`,
 * `error`), each with one `tenant` rule of {@link LIMIT} per minute, and the load shots that make
 * each policy visible: a tenant exhausted on Redis before the fault (so `local` and `allow` answers
 * differ from Redis ones) and fresh tenants (so `deny` and `error` answers do).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Shot } from "./load.js";
import type { Answer, RlsClient } from "./rls-client.js";

/** requests_per_unit (per minute) of every rule. */
export const LIMIT = 20;
/** The failure policies, one domain each. */
export const POLICIES = ["local", "allow", "deny", "error"] as const;
export type PolicyName = (typeof POLICIES)[number];

/** A config directory with one file per policy domain. */
export function policyConfigDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-chaos-"));
  for (const p of POLICIES) {
    const text = [
      `domain: ${p}`,
      `on_store_error: ${p}`,
      "descriptors:",
      "  - key: tenant",
      `    rate_limit: { unit: minute, requests_per_unit: ${LIMIT} }`,
      "",
    ].join("\n");
    writeFileSync(join(dir, `${p}.yaml`), text);
  }
  return dir;
}

/** Shot `i`: `local` and `allow` on the exhausted tenant `hot`, `deny` and `error` on a fresh one. */
export function policyShot(i: number): Shot {
  const domain = POLICIES[i % POLICIES.length] ?? "local";
  const tenant = domain === "local" || domain === "allow" ? "hot" : `fresh-${i}`;
  return { label: domain, domain, descriptors: [[["tenant", tenant]]] };
}

/**
 * Spend the `hot` tenant's whole limit on the store in the `local` and `allow` domains, one call at a
 * time (a cold connection must not trip the breaker), and check the store said so: the last call of
 * each domain is OVER_LIMIT. A starved machine can make a healthy call miss the deadline, answered by
 * policy without charging the store (and a few misses open the breaker): then the round is repeated
 * once the breaker has had time to close; the extra calls are over the limit and charge nothing.
 */
export async function exhaustHot(client: RlsClient): Promise<void> {
  for (const domain of ["local", "allow"]) {
    let last: Answer | undefined;
    for (let round = 0; round < 4 && last?.code !== "OVER_LIMIT"; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      for (let i = 0; i <= LIMIT; i++) last = await client.call(domain, [[["tenant", "hot"]]]);
    }
    if (last?.code !== "OVER_LIMIT")
      throw new Error(`hot tenant not exhausted in ${domain}: ${JSON.stringify(last)}`);
  }
}

/** Whether `a` is what policy `p` answers while the store is out (`local`: any decision, no error). */
export function followsPolicy(p: PolicyName, a: Answer): boolean {
  switch (p) {
    case "local":
      return a.grpcStatus === 0 && (a.code === "OK" || a.code === "OVER_LIMIT");
    case "allow":
      return a.grpcStatus === 0 && a.code === "OK";
    case "deny":
      return a.grpcStatus === 0 && a.code === "OVER_LIMIT" && Number(a.headers["retry-after"]) >= 1;
    case "error":
      return a.grpcStatus === 14;
  }
}

/** Whether `a` is what the healthy store answers for shot of policy `p` (after {@link exhaustHot}). */
export function followsStore(p: PolicyName, a: Answer): boolean {
  if (a.grpcStatus !== 0) return false;
  return p === "local" || p === "allow" ? a.code === "OVER_LIMIT" : a.code === "OK";
}
