/**
 * The fields of one request header block, as the HPACK decoder emits them: collected into a header
 * object (lower-case names; repeated fields joined with ", ", cookies with "; "), bounded, and checked
 * for what makes an HTTP/2 request malformed (RFC 9113 §8.2–8.3).
 */

/** Request headers: lower-case names, null prototype. */
export type H2Headers = Record<string, string>;

/** Largest header list (RFC 9113 §6.5.2 octets) a request may carry: past it, REFUSED_STREAM. */
export const MAX_HEADER_LIST = 65_536;
/** Most header fields a request may carry: past it, ENHANCE_YOUR_CALM (node:http2's bounds, too). */
export const MAX_HEADER_PAIRS = 128;
/** Connection-specific fields, malformed in an HTTP/2 request (RFC 9113 §8.2.2). */
const CONNECTION_FIELDS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);
/** The request pseudo-header fields (RFC 9113 §8.3.1). */
const REQUEST_PSEUDO = new Set([":method", ":scheme", ":path", ":authority"]);

/** Collects one block at a time (a connection decodes its blocks one after another). */
export class RequestFields {
  /** Fields of the block being decoded. */
  fields: H2Headers = Object.create(null);
  /**
   * Fields of the block, counted past MAX_HEADER_PAIRS too. Its octets are not counted here: the HPACK
   * decoder bounds the header list (its `maxOctets`) and stops emitting past it.
   */
  count = 0;
  /** Why the block is a malformed request ("" when it is not): checked field by field. */
  malformed = "";
  /** `content-length` as a number, -1 without one (a malformed value makes the block malformed). */
  contentLength = -1;
  /** Pseudo-header fields in the block (none are allowed in trailers). */
  pseudo = 0;
  #regularSeen = false;
  /** Regular field names already checked (lower-case, not connection-specific); bounded. */
  readonly #goodNames = new Set<string>();

  /** Start a new block. */
  begin(): void {
    this.fields = Object.create(null);
    this.count = 0;
    this.malformed = "";
    this.contentLength = -1;
    this.pseudo = 0;
    this.#regularSeen = false;
  }

  /**
   * Why the block, as a request's headers, is malformed (RFC 9113 §8.3.1), "" when it is not: the
   * field-level problems, then the pseudo-headers a request must carry (`:method`; `:scheme` and a
   * non-empty `:path` unless CONNECT, which carries `:authority` and neither of them).
   */
  requestProblem(): string {
    if (this.malformed !== "") return this.malformed;
    const f = this.fields;
    const method = f[":method"];
    if (method === undefined) return "no :method";
    if (method === "CONNECT") {
      if (f[":scheme"] !== undefined || f[":path"] !== undefined) return "CONNECT with :scheme or :path";
      return f[":authority"] === undefined ? "CONNECT without :authority" : "";
    }
    if (f[":scheme"] === undefined) return "no :scheme";
    const path = f[":path"];
    if (path === undefined || path === "") return path === undefined ? "no :path" : "empty :path";
    if (path.charCodeAt(0) !== 0x2f && !(path === "*" && method === "OPTIONS"))
      return `:path ${JSON.stringify(path.slice(0, 64))} is neither absolute nor *`;
    return "";
  }

  /** Why the block, as trailers, is malformed (RFC 9113 §8.1): "" when it is not. */
  trailersProblem(): string {
    if (this.pseudo > 0) return "pseudo-header in trailers";
    return this.malformed;
  }

  /** One decoded field (the HPACK decoder's callback). */
  readonly emit = (name: string, value: string): void => {
    if (++this.count > MAX_HEADER_PAIRS) return;
    const fields = this.fields;
    const prev = fields[name];
    if (name.charCodeAt(0) === 0x3a) {
      this.pseudo++;
      if (this.#regularSeen) this.malformed ||= `pseudo-header ${name} after regular fields`;
      else if (!REQUEST_PSEUDO.has(name)) this.malformed ||= `unknown pseudo-header ${name}`;
      else if (prev !== undefined) this.malformed ||= `repeated ${name}`;
    } else {
      this.#regularSeen = true;
      if (!this.#goodNames.has(name)) this.#checkName(name);
      if (name === "te" && value !== "trailers") this.malformed ||= `te: ${value}`;
      else if (name === "content-length") this.#contentLength(value);
    }
    if (prev === undefined) fields[name] = value;
    else fields[name] = `${prev}${name === "cookie" ? "; " : ", "}${value}`;
  };

  /** RFC 9110 §8.6: digits only; a repeated field must repeat the same value. */
  #contentLength(value: string): void {
    const n = /^[0-9]{1,15}$/.test(value) ? Number(value) : -1;
    if (n < 0) this.malformed ||= `content-length ${JSON.stringify(value.slice(0, 32))}`;
    else if (this.contentLength >= 0 && this.contentLength !== n)
      this.malformed ||= "conflicting content-length";
    else this.contentLength = n;
  }

  #checkName(name: string): void {
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c >= 0x41 && c <= 0x5a) {
        this.malformed ||= `upper-case field name ${name}`;
        return;
      }
    }
    if (name.length === 0 || CONNECTION_FIELDS.has(name)) {
      this.malformed ||= `connection-specific or empty field name "${name}"`;
      return;
    }
    if (this.#goodNames.size >= 1024) this.#goodNames.clear();
    this.#goodNames.add(name);
  }
}
