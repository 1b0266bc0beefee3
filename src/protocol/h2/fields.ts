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
  /** Fields and octets (name + value + 32 each) of the block, counted past the bounds too. */
  count = 0;
  bytes = 0;
  /** Why the block is a malformed request ("" when it is not). */
  malformed = "";
  #regularSeen = false;
  /** Regular field names already checked (lower-case, not connection-specific); bounded. */
  readonly #goodNames = new Set<string>();

  /** Start a new block. */
  begin(): void {
    this.fields = Object.create(null);
    this.count = 0;
    this.bytes = 0;
    this.malformed = "";
    this.#regularSeen = false;
  }

  /** One decoded field (the HPACK decoder's callback). */
  readonly emit = (name: string, value: string): void => {
    this.count++;
    this.bytes += name.length + value.length + 32;
    if (this.bytes > MAX_HEADER_LIST || this.count > MAX_HEADER_PAIRS) return;
    const fields = this.fields;
    if (name.charCodeAt(0) === 0x3a) {
      if (this.#regularSeen) this.malformed ||= `pseudo-header ${name} after regular fields`;
      else if (!REQUEST_PSEUDO.has(name)) this.malformed ||= `unknown pseudo-header ${name}`;
      else if (fields[name] !== undefined) this.malformed ||= `repeated ${name}`;
    } else {
      this.#regularSeen = true;
      if (!this.#goodNames.has(name)) this.#checkName(name);
      if (name === "te" && value !== "trailers") this.malformed ||= `te: ${value}`;
    }
    const prev = fields[name];
    if (prev === undefined) fields[name] = value;
    else fields[name] = `${prev}${name === "cookie" ? "; " : ", "}${value}`;
  };

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
