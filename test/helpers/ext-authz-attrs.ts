/** Test builder of RequestAttributes with defaults. */
import type { RequestAttributes } from "../../src/engine/extract.js";

export interface AttrsInit {
  method?: string;
  path?: string;
  query?: string;
  headers?: Record<string, string>;
  sourceIp?: string;
  contextExtensions?: Record<string, string>;
  metadata?: Record<string, unknown>;
}

/** Attributes of a `GET /` from 203.0.113.7 unless overridden. */
export function attrs(init: AttrsInit = {}): RequestAttributes {
  return {
    method: init.method ?? "GET",
    path: init.path ?? "/",
    query: init.query ?? "",
    headers: new Map(Object.entries(init.headers ?? {})),
    sourceIp: "sourceIp" in init ? init.sourceIp : "203.0.113.7",
    contextExtensions: new Map(Object.entries(init.contextExtensions ?? {})),
    metadata: new Map(Object.entries(init.metadata ?? {})),
  };
}

/** A compact JWT with the given payload and a fake signature (tollgate never verifies it). */
export function fakeJwt(payload: Record<string, unknown>): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "RS256", typ: "JWT" })}.${b64(payload)}.c2lnbmF0dXJl`;
}
