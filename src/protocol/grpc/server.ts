/**
 * A lean unary-gRPC server: the transport seam of protocol/. It knows nothing of rate limiting: it
 * routes `:path` to a UnaryMethod and enforces the gRPC-over-HTTP/2 rules a gateway sidecar relies on
 * (content-type, `grpc-timeout`, message size, gzip, trailers-only errors, percent-encoded
 * `grpc-message`, an in-flight bound, GOAWAY on drain, idle connections closed). A bad peer never
 * crashes the process: connection and stream errors are reported to `onError` and only that peer is
 * cut.
 *
 * Two HTTP/2 implementations carry it, with the same behaviour (test/protocol/grpc runs on both):
 * tollgate's own (protocol/h2, the default: a request is a small record and a turn's answers leave in
 * one socket write) and node:http2 (a Duplex stream, header objects and several events per request;
 * the own one costs a quarter to a third of its CPU per call: docs/decisions/http2-transport.md).
 *
 * Why not @grpc/grpc-js: issue 2 measured it at ~55-60% of the raw node:http2 ceiling.
 */
import type { AddressInfo } from "node:net";
import { type CallHeaders, type CallHost, trailersOnly, UnaryCall, type UnaryMethod } from "./call.js";
import { createH2Transport } from "./h2-transport.js";
import { idleSweeper } from "./idle.js";
import { createNodeTransport } from "./node-transport.js";
import { Status } from "./status.js";
import { parseGrpcTimeout } from "./timeout.js";
import type { AcceptStream, Connection, TlsOptions } from "./transport.js";

export type { CallContext, UnaryMethod } from "./call.js";
export type { TlsOptions } from "./transport.js";

/** Which HTTP/2 implementation serves the gRPC port. */
export type GrpcTransport = "tollgate" | "node";

export interface GrpcServerOptions {
  // biome-ignore lint/suspicious/noExplicitAny: methods of different message types share one list
  readonly methods: readonly UnaryMethod<any, any>[];
  /** Largest request message in bytes, compressed or after decompression. Larger → RESOURCE_EXHAUSTED. */
  readonly maxMessageBytes: number;
  /** Calls in flight past which a new one is answered RESOURCE_EXHAUSTED at once. @default Infinity */
  readonly maxInFlight?: number;
  /** Serve TLS instead of h2c. */
  readonly tls?: TlsOptions;
  /**
   * Close a connection after this many ms without any traffic: GOAWAY, then closed once its calls
   * finish (at once if it has none); 0 never. Without it a peer that vanished, or half-closed in the
   * middle of a frame, holds its connection (and file descriptor) forever; Envoy just reconnects.
   * @default 300000 (5 minutes)
   */
  readonly idleTimeoutMs?: number;
  /** Unexpected handler errors (answered INTERNAL) and peer session/stream errors. @default ignore */
  readonly onError?: (err: unknown, where: string) => void;
  /**
   * `tollgate`: the own HTTP/2 connection of protocol/h2 (default); `node`: node:http2. Same
   * behaviour (test/protocol/grpc runs its conformance tests on both); the own one costs a quarter to
   * a third of the CPU per call (docs/decisions/http2-transport.md).
   */
  readonly transport?: GrpcTransport;
  /** Call accounting for metrics (`tollgate_in_flight_requests`, `tollgate_rejected_requests_total`). */
  readonly events?: ServerEvents;
}

/** What the transport reports about calls; TollgateMetrics implements it. */
export interface ServerEvents {
  requestStarted(): void;
  requestFinished(): void;
  rejected(reason: "overload" | "invalid_argument" | "deadline"): void;
}

export interface GrpcServer {
  /** Listen on `host:port` (port 0 picks a free one); resolves to the bound address. */
  listen(host: string, port: number): Promise<AddressInfo>;
  /**
   * Stop accepting connections, send GOAWAY on every session, let calls in flight finish, and after
   * `timeoutMs` cut whatever is left. Resolves when every session is closed.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Close at once, cutting calls in flight. */
  close(): Promise<void>;
  /** Calls accepted and not yet answered. */
  inFlight(): number;
}

/** `application/grpc`, `application/grpc+proto`, optionally with parameters. */
const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const ACCEPT_ENCODING = Object.freeze({ "grpc-accept-encoding": "identity,gzip" });

/** Create (not yet listening) a unary gRPC server for `opts.methods`. */
export function createGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const methods = new Map<string, UnaryMethod>(opts.methods.map((m) => [m.path, m as UnaryMethod]));
  const maxInFlight = opts.maxInFlight ?? Number.POSITIVE_INFINITY;
  const onError = opts.onError ?? (() => {});
  const connections = new Set<Connection>();
  let inFlight = 0;
  let draining = false;
  const events = opts.events;
  const host: CallHost = {
    maxMessageBytes: opts.maxMessageBytes,
    onError,
    callDone: () => {
      inFlight--;
      events?.requestFinished();
    },
    ...(events ? { rejected: (reason: "invalid_argument" | "deadline") => events.rejected(reason) } : {}),
  };

  /** Check a new stream's headers: its call, or undefined when it was answered (refused) already. */
  const accept = (stream: AcceptStream, headers: CallHeaders): UnaryCall | undefined => {
    const contentType = headers["content-type"];
    if (typeof contentType !== "string" || !GRPC_CONTENT_TYPE.test(contentType)) {
      // gRPC over HTTP/2: a non-gRPC content-type is answered at the HTTP layer (415).
      stream.respondText(
        415,
        `unsupported content-type ${JSON.stringify(contentType ?? "")}: expected application/grpc\n`,
      );
      return undefined;
    }
    const path = headers[":path"] ?? "";
    const method = typeof path === "string" ? methods.get(path) : undefined;
    if (method === undefined || headers[":method"] !== "POST") {
      trailersOnly(stream, Status.UNIMPLEMENTED, `unknown method ${headers[":method"] ?? ""} ${path}`);
      return undefined;
    }
    const encoding = headers["grpc-encoding"];
    const gzip = encoding === "gzip";
    if (!gzip && encoding !== undefined && encoding !== "identity") {
      trailersOnly(
        stream,
        Status.UNIMPLEMENTED,
        `unsupported grpc-encoding ${String(encoding)}`,
        ACCEPT_ENCODING,
      );
      return undefined;
    }
    const timeout = headers["grpc-timeout"];
    let timeoutMs: number | undefined;
    if (typeof timeout === "string") {
      timeoutMs = parseGrpcTimeout(timeout);
      if (timeoutMs === undefined) {
        trailersOnly(stream, Status.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeout)}`);
        return undefined;
      }
    }
    if (inFlight >= maxInFlight) {
      events?.rejected("overload");
      trailersOnly(stream, Status.RESOURCE_EXHAUSTED, `server overloaded: ${inFlight} calls in flight`);
      return undefined;
    }
    inFlight++;
    events?.requestStarted();
    return new UnaryCall(stream, headers, method, gzip, timeoutMs, host);
  };

  const addConnection = (c: Connection): void => {
    connections.add(c);
    c.onClose(() => connections.delete(c));
    if (draining) c.close();
  };

  const hooks = { accept, addConnection, onError };
  const server =
    (opts.transport ?? "tollgate") === "tollgate"
      ? createH2Transport(opts.tls, hooks)
      : createNodeTransport(opts.tls, hooks);
  const idleTimeoutMs = opts.idleTimeoutMs ?? 300_000;
  const sweeper = idleTimeoutMs > 0 ? idleSweeper(connections, idleTimeoutMs) : undefined;

  const allClosed = (): Promise<void> =>
    Promise.all([...connections].map((c) => new Promise<void>((resolve) => c.onClose(resolve)))).then(
      () => {},
    );
  const serverClosed = (): Promise<void> =>
    new Promise((resolve) =>
      server.close(() => {
        clearInterval(sweeper);
        resolve();
      }),
    );

  return {
    listen: (hostname, port) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, hostname, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async drain(timeoutMs) {
      draining = true;
      const closed = serverClosed();
      const sessionsClosed = allClosed();
      // close(): GOAWAY now; the session ends by itself once its open streams finish.
      for (const c of connections) c.close();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([sessionsClosed, late]);
      clearTimeout(timer);
      for (const c of connections) c.destroy();
      await closed;
    },
    async close() {
      draining = true;
      const closed = serverClosed();
      for (const c of connections) c.destroy();
      await closed;
    },
    inFlight: () => inFlight,
  };
}
