/**
 * JWT claims as descriptor values.
 *
 * tollgate does NOT verify JWT signatures. Envoy's `jwt_authn` filter must run before ext_authz and
 * verify the token; the claim is then taken, in this order, from the header jwt_authn's
 * `claim_to_headers` wrote, from the payload its `payload_in_metadata` wrote (forwarded to ext_authz
 * through `metadata_context_namespaces`), and only then by decoding the bearer token's payload.
 */
import type { RequestAttributes } from "./attributes.js";
import type { JwtClaimSource } from "./rules.js";

/** A claim value usable as a descriptor value: strings as they are, numbers and booleans as text. */
function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return v === "" ? undefined : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** Follow `path` into a decoded payload. */
function claimAt(payload: unknown, path: readonly string[]): string | undefined {
  let at = payload;
  for (const part of path) {
    if (at === null || typeof at !== "object" || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return scalar(at);
}

const BEARER = /^bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/i;

/** The payload object of a `Bearer` compact JWT, unverified; undefined when malformed. */
export function decodeBearerPayload(header: string): unknown {
  const m = BEARER.exec(header.trim());
  const part = m?.[2];
  if (part === undefined) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return payload !== null && typeof payload === "object" && !Array.isArray(payload) ? payload : undefined;
  } catch {
    return undefined;
  }
}

/** The claim's value from the most trusted place that has it. */
export function jwtClaim(source: JwtClaimSource, attrs: RequestAttributes): string | undefined {
  if (source.claimHeader !== undefined) {
    const v = attrs.headers.get(source.claimHeader);
    if (v !== undefined && v !== "") return v;
  }
  if (source.payloadMetadataKey !== undefined) {
    const ns = attrs.metadata.get(source.metadataNamespace);
    const payload =
      ns !== null && typeof ns === "object"
        ? (ns as Record<string, unknown>)[source.payloadMetadataKey]
        : undefined;
    const v = claimAt(payload, source.claimPath);
    if (v !== undefined) return v;
  }
  if (!source.decodeToken) return undefined;
  const token = attrs.headers.get(source.tokenHeader);
  return token === undefined ? undefined : claimAt(decodeBearerPayload(token), source.claimPath);
}
