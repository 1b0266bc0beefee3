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
 * Why not @grpc/grpc-js: its per-call objects (call, metadata, status, serializers) and promise hops
 * cost more CPU than tollgate spends deciding a request; figures, oracle tests and how to switch back
 * in docs/decisions/grpc-server.md.
 */
import type { AddressInfo } from "node:net";
import type { H2Limits } from "../h2/limits.js";
import { type CallHeaders, type CallHost, trailersOnly, UnaryCall, type UnaryMethod } from "./call.js";
import { createH2Transport } from "./h2-transport.js";
import { idleSweeper } from "./idle.js";
import { createNodeTransport } from "./node-transport.js";
import { Status } from "./status.js";
import { StreamCall, type StreamHost, type StreamMethod } from "./stream-call.js";
import { parseGrpcTimeout } from "./timeout.js";
import type { AcceptedCall, AcceptStream, Connection, TlsOptions } from "./transport.js";

export type { CallContext, UnaryMethod } from "./call.js";
export type { StreamContext, StreamHandler, StreamMethod } from "./stream-call.js";
export type { TlsOptions } from "./transport.js";

/** Which HTTP/2 implementation serves the gRPC port. */
export type GrpcTransport = "tollgate" | "node";

export interface GrpcServerOptions {
  // biome-ignore lint/suspicious/noExplicitAny: methods of different message types share one list
  readonly methods: readonly UnaryMethod<any, any>[];
  /**
   * Bidirectional-streaming methods (RLQS), on both transports. Their streams count against the
   * transport's per-connection stream bound and `maxStreamsPerConnection`; on the own transport a
   * streaming stream must complete its first message within the request deadline, then it is
   * long-lived (docs/security.md).
   */
  // biome-ignore lint/suspicious/noExplicitAny: methods of different message types share one list
  readonly streamMethods?: readonly StreamMethod<any, any>[];
  /** Open streaming calls per connection past which a new one is refused RESOURCE_EXHAUSTED. @default 100 */
  readonly maxStreamsPerConnection?: number;
  /** Response bytes a streaming call may buffer for a slow reader before it is ended. @default 1 MiB */
  readonly maxStreamBufferedBytes?: number;
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
  /** Open connections past which a new one is closed as it arrives (both transports). @default 10000 */
  readonly maxConnections?: number;
  /**
   * Own transport: the bounds of each connection (protocol/h2/limits.ts, docs/security.md); unset
   * fields keep their defaults. `maxStreams` also bounds node:http2's concurrent streams.
   */
  readonly limits?: Partial<H2Limits>;
  /** Own transport: request bytes all connections may buffer past their first 64 KiB. @default 128 MiB */
  readonly maxBufferedBytes?: number;
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
  /** Streaming calls open. */
  openStreams(): number;
}

/** `application/grpc`, `application/grpc+proto`, optionally with parameters. */
const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const ACCEPT_ENCODING = Object.freeze({ "grpc-accept-encoding": "identity,gzip" });

/** Create (not yet listening) a unary gRPC server for `opts.methods`. */
export function createGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const methods = new Map<string, UnaryMethod>(opts.methods.map((m) => [m.path, m as UnaryMethod]));
  const streamMethods = new Map<string, StreamMethod>(
    (opts.streamMethods ?? []).map((m) => [m.path, m as StreamMethod]),
  );
  const maxStreamsPerConnection = opts.maxStreamsPerConnection ?? 100;
  const streams = new Set<StreamCall>();
  const streamsPerConnection = new WeakMap<object, number>();
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

  const streamHost: StreamHost = {
    maxMessageBytes: opts.maxMessageBytes,
    maxBufferedBytes: opts.maxStreamBufferedBytes ?? 1024 * 1024,
    onError,
    callDone: (call) => {
      streams.delete(call);
      const n = streamsPerConnection.get(call.connection) ?? 1;
      streamsPerConnection.set(call.connection, n - 1);
    },
  };

  /** A streaming method's call, or undefined when refused (answered already). */
  const acceptStreaming = (
    stream: AcceptStream,
    headers: CallHeaders,
    method: StreamMethod,
    gzip: boolean,
  ): StreamCall | undefined => {
    if (draining) {
      trailersOnly(stream, Status.UNAVAILABLE, "server draining: reconnect to another instance");
      return undefined;
    }
    const wire = stream.streamWire();
    const open = streamsPerConnection.get(wire.connection) ?? 0;
    if (open >= maxStreamsPerConnection) {
      events?.rejected("overload");
      trailersOnly(
        stream,
        Status.RESOURCE_EXHAUSTED,
        `too many streams on this connection: ${open} open, limit ${maxStreamsPerConnection}`,
      );
      return undefined;
    }
    streamsPerConnection.set(wire.connection, open + 1);
    const call = new StreamCall(wire, headers, stream.peer, method, gzip, streamHost);
    if (!call.ended) streams.add(call);
    return call;
  };

  /** Check a new stream's headers: its call, or undefined when it was answered (refused) already. */
  const accept = (stream: AcceptStream, headers: CallHeaders): AcceptedCall | undefined => {
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
    const streamMethod = typeof path === "string" ? streamMethods.get(path) : undefined;
    if ((method === undefined && streamMethod === undefined) || headers[":method"] !== "POST") {
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
    if (streamMethod !== undefined) return acceptStreaming(stream, headers, streamMethod, gzip);
    if (method === undefined) return undefined; // unreachable: checked above
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
  // A connection must be able to hold one whole message (a unary call decodes it at its end).
  const window = opts.limits?.connectionWindow;
  const limits: Partial<H2Limits> = {
    ...opts.limits,
    ...(window === undefined ? {} : { connectionWindow: Math.max(window, opts.maxMessageBytes + 65_536) }),
  };
  const server =
    (opts.transport ?? "tollgate") === "tollgate"
      ? createH2Transport(opts.tls, hooks, { limits, maxBufferedBytes: opts.maxBufferedBytes ?? 128 << 20 })
      : createNodeTransport(opts.tls, hooks, limits.maxStreams);
  server.maxConnections = opts.maxConnections ?? 10_000;
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
      // close(): GOAWAY now; the session ends by itself once its open streams finish. Long-lived
      // streams (RLQS) end now, cleanly (grpc-status 0): the client reconnects elsewhere.
      for (const c of connections) c.close();
      for (const call of [...streams]) call.end(Status.OK);
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
    openStreams: () => streams.size,
  };
}
