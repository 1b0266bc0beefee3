/** The gRPC server's transport over tollgate's own HTTP/2 (protocol/h2; `--grpc-transport tollgate`). */
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from "node:tls";
import { BufferPool, H2Connection, type H2Limits, type H2Stream } from "../h2/connection.js";
import { fieldsBlock, responseBlock } from "../h2/frames.js";
import type { AcceptStream, Connection, StreamWire, TlsOptions, TransportHooks } from "./transport.js";

const H2_OK_HEADERS = responseBlock(200, [["content-type", "application/grpc"]]);
const H2_OK_TRAILERS = fieldsBlock([["grpc-status", "0"]]);

/** An own-transport stream as a CallStream. */
class H2CallStream implements AcceptStream {
  constructor(readonly stream: H2Stream) {}
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get peer(): string | undefined {
    return this.stream.peer;
  }
  respondOk(framed: Buffer): void {
    this.stream.respond(H2_OK_HEADERS, framed, H2_OK_TRAILERS);
  }
  respondTrailersOnly(fields: readonly (readonly [string, string])[]): void {
    this.stream.respond(
      responseBlock(200, [["content-type", "application/grpc"], ...fields]),
      undefined,
      undefined,
    );
  }
  respondText(status: number, body: string): void {
    this.stream.respond(
      responseBlock(status, [["content-type", "text/plain"]]),
      Buffer.from(body, "utf8"),
      undefined,
    );
  }
  destroy(): void {
    this.stream.destroy();
  }
  streamWire(): StreamWire {
    return new H2StreamWire(this.stream);
  }
}

/**
 * A long-lived response on an own-transport stream: headers once, messages within the peer's windows
 * (parked in order while they are shut), trailers after the last parked byte (protocol/h2/send.ts).
 */
class H2StreamWire implements StreamWire {
  constructor(readonly stream: H2Stream) {}
  get connection(): object {
    return this.stream.connection;
  }
  get buffered(): number {
    return this.stream.pending?.length ?? 0;
  }
  get room(): number {
    return this.stream.connection.room(this.stream);
  }
  open(): void {
    this.stream.connection.openAnswer(this.stream, H2_OK_HEADERS);
  }
  write(framed: Buffer): boolean {
    this.open();
    return this.stream.connection.write(this.stream, framed);
  }
  finish(fields: readonly (readonly [string, string])[]): void {
    const s = this.stream;
    if (s.headersSent) s.connection.finish(s, fieldsBlock(fields));
    else
      s.respond(responseBlock(200, [["content-type", "application/grpc"], ...fields]), undefined, undefined);
  }
  consumed(n: number): void {
    this.stream.connection.consumed(this.stream, n);
  }
}

function h2Connection(conn: H2Connection): Connection {
  return {
    activity: () => conn.activity,
    get closed() {
      return conn.closed;
    },
    close: () => conn.close(),
    destroy: () => conn.destroy(),
    onClose: (listener) => conn.onClose(listener),
  };
}

/** Bounds of the own transport's connections (docs/security.md). */
export interface H2TransportOptions {
  readonly limits: Partial<H2Limits>;
  /** Request bytes all connections may buffer past their first 64 KiB (one BufferPool). */
  readonly maxBufferedBytes: number;
}

/** A TCP (or TLS, ALPN `h2` only) server whose connections speak HTTP/2 through H2Connection. */
export function createH2Transport(
  tls: TlsOptions | undefined,
  hooks: TransportHooks,
  bounds: H2TransportOptions = { limits: {}, maxBufferedBytes: 128 << 20 },
): NetServer | TlsServer {
  const onStream = (s: H2Stream): void => {
    const call = hooks.accept(new H2CallStream(s), s.headers);
    if (call !== undefined) s.handler = call;
  };
  const pool = new BufferPool(bounds.maxBufferedBytes);
  const options = { onStream, onError: hooks.onError, limits: bounds.limits, pool };
  const start = (socket: Socket): void => {
    socket.on("error", () => {}); // reported by the connection; a reset before that is no news
    hooks.addConnection(h2Connection(new H2Connection(socket, options)));
  };
  if (!tls) return createNetServer({ allowHalfOpen: true, noDelay: true }, start);
  const server = createTlsServer({
    cert: tls.cert,
    key: tls.key,
    ALPNProtocols: ["h2"],
    allowHalfOpen: true,
    ...(bounds.limits.handshakeTimeoutMs === undefined
      ? {}
      : { handshakeTimeout: bounds.limits.handshakeTimeoutMs }),
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  });
  server.on("secureConnection", (socket: TLSSocket) => {
    if (socket.alpnProtocol !== "h2") {
      hooks.onError(
        new Error(`TLS client did not negotiate h2 (ALPN ${String(socket.alpnProtocol)})`),
        "session",
      );
      socket.destroy();
      return;
    }
    start(socket);
  });
  server.on("tlsClientError", (err) => hooks.onError(err, "session"));
  return server;
}
