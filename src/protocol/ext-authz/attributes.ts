/**
 * Envoy's `AttributeContext` (protobuf) → the plain `RequestAttributes` extraction reads.
 */
import type { RequestAttributes } from "../../engine/extract.js";
import type { HeaderMap } from "../../gen/envoy/config/core/v3/base_pb.js";
import type { AttributeContext } from "../../gen/envoy/service/auth/v3/attribute_context_pb.js";

/**
 * Headers by lower-cased name. Envoy sends the `headers` map (repeated values already joined with
 * `,`), or with `encode_raw_headers` the `header_map` list, whose repeats are joined here the same way.
 */
function headersOf(map: { [k: string]: string }, list: HeaderMap | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(map)) out.set(k.toLowerCase(), v);
  if (out.size > 0 || list === undefined) return out;
  for (const h of list.headers) {
    const key = h.key.toLowerCase();
    const value = h.value !== "" ? h.value : Buffer.from(h.rawValue).toString("utf8");
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : `${prev},${value}`);
  }
  return out;
}

/** Split the request target into path and query. Envoy puts the query string in `path` and leaves `query` empty. */
function splitTarget(target: string, query: string): { path: string; query: string } {
  const noFragment = target.split("#", 1)[0] ?? "";
  const q = noFragment.indexOf("?");
  if (q < 0) return { path: noFragment, query };
  return { path: noFragment.slice(0, q), query: query !== "" ? query : noFragment.slice(q + 1) };
}

/** Build the extraction view of one Check request's attributes. */
export function requestAttributes(ctx: AttributeContext | undefined): RequestAttributes {
  const http = ctx?.request?.http;
  const headers = headersOf(http?.headers ?? {}, http?.headerMap);
  const target = splitTarget(http?.path || (headers.get(":path") ?? ""), http?.query ?? "");
  const address = ctx?.source?.address?.address;
  return {
    method: http?.method || (headers.get(":method") ?? ""),
    path: target.path,
    query: target.query,
    headers,
    sourceIp:
      address?.case === "socketAddress" && address.value.address !== "" ? address.value.address : undefined,
    contextExtensions: new Map(Object.entries(ctx?.contextExtensions ?? {})),
    metadata: new Map(Object.entries(ctx?.metadataContext?.filterMetadata ?? {})),
  };
}
