/**
 * The request attributes extraction reads: a plain-TypeScript view of Envoy's ext_authz
 * `AttributeContext`, built by protocol/ext-authz. Nothing here knows about protobuf.
 */

/** One HTTP request as Envoy's ext_authz filter describes it. */
export interface RequestAttributes {
  /** HTTP method, upper case as sent (`GET`). */
  readonly method: string;
  /** URL path without query string or fragment (`/v1/orders/42`). */
  readonly path: string;
  /** Query string without the leading `?`; `""` when there is none. */
  readonly query: string;
  /** Request headers by lower-cased name; repeated headers are joined with `,` (as Envoy does). */
  readonly headers: ReadonlyMap<string, string>;
  /**
   * Downstream peer IP (`attributes.source.address.socket_address.address`). Envoy fills it with the
   * connection's remote address, or the client address its `xff_num_trusted_hops` /
   * original-IP-detection settings derive. Undefined for pipes or when absent.
   */
  readonly sourceIp: string | undefined;
  /** `context_extensions` set on the filter or per route. */
  readonly contextExtensions: ReadonlyMap<string, string>;
  /** `metadata_context.filter_metadata` as JSON: namespace → object (e.g. what jwt_authn wrote). */
  readonly metadata: ReadonlyMap<string, unknown>;
}
