/**
 * A lean unary-gRPC server on node:http2 — the transport seam of protocol/. It knows nothing of rate
 * limiting: it routes `:path` to a UnaryMethod, enforces the gRPC-over-HTTP/2 rules that matter to a
 * gateway sidecar (content-type, grpc-timeout, message size, gzip, trailers-only errors, percent-encoded
 * grpc-message, in-flight bound, GOAWAY on drain) and never lets a bad peer crash the process.
 */
import {
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { AddressInfo } from "node:net";
import { frame, UnaryReader } from "./framing.js";
import { encodeGrpcMessage, GrpcError, Status, type StatusCode } from "./status.js";
import { parseGrpcTimeout } from "./timeout.js";

/** What a handler gets besides its decoded input. */
export interface CallContext {
  /** Epoch ms by which the caller wants an answer (from grpc-timeout), if any. */
  readonly deadline: number | undefined;
  /** Aborted when the deadline passes or the client cancels. */
  readonly signal: AbortSignal;
  readonly headers: IncomingHttpHeaders;
  /** Remote address of the connection. */
  readonly peer: string | undefined;
}

/** One unary RPC: `/package.Service/Method`, its codecs and its handler. */
export interface UnaryMethod<I = unknown, O = unknown> {
  readonly path: string;
  decode(bytes: Uint8Array): I;
  encode(output: O): Uint8Array;
  handle(input: I, ctx: CallContext): Promise<O>;
}

export interface TlsOptions {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** When set, clients must present a certificate signed by this CA (mTLS). */
  readonly clientCa?: string | Buffer;
}

export interface GrpcServerOptions {
  // biome-ignore lint/suspicious/noExplicitAny: methods of different message types live in one list
  readonly methods: readonly UnaryMethod<any, any>[];
  /** Largest request message, in bytes (after decompression). Larger → RESOURCE_EXHAUSTED. */
  readonly maxMessageBytes: number;
  /** Requests in flight past which new ones get RESOURCE_EXHAUSTED at once. @default Infinity */
  readonly maxInFlight?: number;
  readonly tls?: TlsOptions;
  /** Unexpected handler errors (answered INTERNAL) and peer/session errors. */
  readonly onError?: (err: unknown, where: string) => void;
}

export interface GrpcServer {
  listen(host: string, port: number): Promise<AddressInfo>;
  /** Refuse new connections, send GOAWAY, wait for in-flight calls (at most `timeoutMs`), then close. */
  drain(timeoutMs: number): Promise<void>;
  /** Close at once, cutting in-flight calls. */
  close(): Promise<void>;
  inFlight(): number;
}

const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const RESPONSE_HEADERS = Object.freeze({ ":status": 200, "content-type": "application/grpc+proto" });
const OK_TRAILERS = Object.freeze({ "grpc-status": "0" });

function describe(err: unknown): GrpcError {
  if (err instanceof GrpcError) return err;
  return new GrpcError(
    Status.INTERNAL,
    `internal error: ${err instanceof Error ? err.message : String(err)}`,
  );
}

export function createGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const methods = new Map<string, UnaryMethod>(opts.methods.map((m) => [m.path, m as UnaryMethod]));
  const maxInFlight = opts.maxInFlight ?? Number.POSITIVE_INFINITY;
  const onError = opts.onError ?? (() => {});
  const sessions = new Set<Http2Session>();
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;

  const server: Http2Server | Http2SecureServer = opts.tls
    ? createSecureServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
        allowHTTP1: false,
      })
    : createServer();

  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", (err) => onError(err, "session"));
    if (draining) session.close();
  });
  server.on("sessionError", (err) => onError(err, "session"));
  server.on("stream", onStream);

  function trailersOnly(stream: ServerHttp2Stream, code: StatusCode, message: string): void {
    if (stream.destroyed || stream.headersSent) return;
    stream.respond(
      {
        ":status": 200,
        "content-type": "application/grpc+proto",
        "grpc-status": String(code),
        "grpc-message": encodeGrpcMessage(message),
      },
      { endStream: true },
    );
  }

  function done(): void {
    inFlight--;
    if (inFlight === 0 && idle) idle();
  }

  function onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on("error", (err) => onError(err, "stream"));
    const contentType = headers["content-type"];
    if (
      headers[":method"] !== "POST" ||
      typeof contentType !== "string" ||
      !GRPC_CONTENT_TYPE.test(contentType)
    ) {
      // gRPC over HTTP/2: a non-gRPC content-type is answered at the HTTP layer.
      if (!stream.destroyed) stream.respond({ ":status": 415, "content-type": "text/plain" });
      stream.end(
        `unsupported content-type ${JSON.stringify(contentType ?? "")}: expected application/grpc\n`,
      );
      stream.resume();
      return;
    }
    const method = methods.get(headers[":path"] ?? "");
    if (!method) {
      trailersOnly(stream, Status.UNIMPLEMENTED, `unknown method ${headers[":path"] ?? ""}`);
      stream.resume();
      return;
    }
    const encodingHeader = headers["grpc-encoding"];
    const encoding =
      encodingHeader === undefined || encodingHeader === "identity" ? "identity" : encodingHeader;
    if (encoding !== "identity" && encoding !== "gzip") {
      if (!stream.destroyed)
        stream.respond(
          {
            ":status": 200,
            "content-type": "application/grpc+proto",
            "grpc-accept-encoding": "identity,gzip",
            "grpc-status": String(Status.UNIMPLEMENTED),
            "grpc-message": encodeGrpcMessage(`unsupported grpc-encoding ${String(encoding)}`),
          },
          { endStream: true },
        );
      stream.resume();
      return;
    }
    let timeoutMs: number | undefined;
    const timeoutHeader = headers["grpc-timeout"];
    if (typeof timeoutHeader === "string") {
      timeoutMs = parseGrpcTimeout(timeoutHeader);
      if (timeoutMs === undefined) {
        trailersOnly(stream, Status.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeoutHeader)}`);
        stream.resume();
        return;
      }
    }
    if (inFlight >= maxInFlight) {
      trailersOnly(stream, Status.RESOURCE_EXHAUSTED, `server overloaded: ${inFlight} requests in flight`);
      stream.resume();
      return;
    }
    inFlight++;
    runCall(stream, headers, method, encoding, timeoutMs);
  }

  function runCall(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    method: UnaryMethod,
    encoding: "identity" | "gzip",
    timeoutMs: number | undefined,
  ): void {
    const reader = new UnaryReader(opts.maxMessageBytes);
    const abort = new AbortController();
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (code: StatusCode, message: string) => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      trailersOnly(stream, code, message);
      if (!abort.signal.aborted) abort.abort();
    };
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => finish(Status.DEADLINE_EXCEEDED, "deadline exceeded"), timeoutMs);
    }
    // The call counts as in flight until its stream is closed (trailers flushed), so a drain never
    // cuts a response short.
    stream.once("close", () => {
      if (!finished) {
        finished = true;
        if (timer) clearTimeout(timer);
        abort.abort();
      }
      done();
    });
    stream.on("data", (chunk: Buffer) => {
      if (finished) return;
      try {
        reader.push(chunk);
      } catch (err) {
        const e = describe(err);
        finish(e.code, e.message);
      }
    });
    stream.on("end", () => {
      if (finished) return;
      let input: unknown;
      try {
        input = method.decode(reader.finish(encoding));
      } catch (err) {
        const e =
          err instanceof GrpcError
            ? err
            : new GrpcError(Status.INVALID_ARGUMENT, `cannot decode request: ${(err as Error).message}`);
        finish(e.code, e.message);
        return;
      }
      const ctx: CallContext = {
        deadline: timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
        signal: abort.signal,
        headers,
        peer: stream.session?.socket?.remoteAddress,
      };
      method.handle(input, ctx).then(
        (output) => {
          if (finished) return;
          let body: Uint8Array;
          try {
            body = method.encode(output);
          } catch (err) {
            onError(err, "encode");
            finish(Status.INTERNAL, "cannot encode response");
            return;
          }
          finished = true;
          if (timer) clearTimeout(timer);
          if (!stream.destroyed) {
            stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
            stream.once("wantTrailers", () => stream.sendTrailers(OK_TRAILERS));
            stream.end(frame(body));
          }
        },
        (err: unknown) => {
          if (!(err instanceof GrpcError)) onError(err, "handler");
          const e = describe(err);
          finish(e.code, e.message);
        },
      );
    });
  }

  return {
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async drain(timeoutMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.close();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, timeoutMs);
          idle = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      for (const s of sessions) s.destroy();
      await closed;
    },
    async close() {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.destroy();
      await closed;
    },
    inFlight: () => inFlight,
  };
}
