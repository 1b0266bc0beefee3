/**
 * A raw node:http2 client for conformance tests: sends exactly the bytes and headers a test names
 * (wrong content-type, truncated frames, gzip, several DATA chunks) and reports what came back,
 * including whether the status arrived trailers-only (in the response HEADERS frame).
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import { gzipSync } from "node:zlib";

/** What one raw call received. */
export interface RawReply {
  readonly headers: IncomingHttpHeaders;
  /** Undefined when the status came trailers-only. */
  readonly trailers: IncomingHttpHeaders | undefined;
  readonly body: Buffer;
  /** `grpc-status` from trailers, or from headers when trailers-only. */
  readonly grpcStatus: number | undefined;
  readonly grpcMessage: string | undefined;
}

export interface RawCall {
  readonly path?: string;
  readonly headers?: OutgoingHttpHeaders;
  /** DATA chunks, written one by one (each its own write, so its own DATA frame). */
  readonly chunks: readonly Uint8Array[];
}

/** Length-prefix `message`; `compressed` gzips it and sets the flag. */
export function grpcFrame(message: Uint8Array, opts: { compressed?: boolean } = {}): Buffer {
  const body = opts.compressed ? gzipSync(message) : Buffer.from(message);
  const out = Buffer.alloc(5 + body.length);
  out[0] = opts.compressed ? 1 : 0;
  out.writeUInt32BE(body.length, 1);
  body.copy(out, 5);
  return out;
}

/** Split `buf` into pieces of at most `size` bytes. */
export function pieces(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** Open an h2c session to `port` on 127.0.0.1. */
export function rawSession(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = connect(`http://127.0.0.1:${port}`);
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
}

/** Make one call on `session` and collect the reply. */
export function rawCall(session: ClientHttp2Session, call: RawCall): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = session.request({
      ":method": "POST",
      ":path": call.path ?? "/test.Echo/Say",
      "content-type": "application/grpc",
      te: "trailers",
      ...call.headers,
    });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const body: Buffer[] = [];
    req.on("response", (h) => {
      headers = h;
    });
    req.on("trailers", (t) => {
      trailers = t;
    });
    req.on("data", (c: Buffer) => body.push(c));
    req.on("error", reject);
    req.on("close", () => {
      const source = trailers ?? headers;
      const status = source["grpc-status"];
      const message = source["grpc-message"];
      resolve({
        headers,
        trailers,
        body: Buffer.concat(body),
        grpcStatus: typeof status === "string" ? Number(status) : undefined,
        grpcMessage: typeof message === "string" ? message : undefined,
      });
    });
    void (async () => {
      for (const chunk of call.chunks) {
        if (req.destroyed) return;
        await new Promise<void>((done) => req.write(chunk, () => done()));
      }
      if (!req.destroyed) req.end();
    })();
  });
}

/** An open streaming call: its request, the response bytes so far, and its status headers. */
export interface OpenStream {
  readonly req: ClientHttp2Stream;
  readonly data: Buffer[];
  /** Trailers, or the response headers of a trailers-only answer. */
  readonly trailers: Promise<Record<string, unknown>>;
}

/** Open a gRPC streaming call on `session` (nothing written yet). */
export function openStream(session: ClientHttp2Session, path: string): OpenStream {
  const req = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
  });
  const data: Buffer[] = [];
  req.on("data", (c: Buffer) => data.push(c));
  const trailers = new Promise<Record<string, unknown>>((resolve) => {
    req.on("trailers", (t) => resolve(t));
    req.on("response", (h) => {
      if (h["grpc-status"] !== undefined) resolve(h);
    });
  });
  return { req, data, trailers };
}
