/**
 * What the gRPC server (server.ts) and its two HTTP/2 transports (node-transport.ts over node:http2,
 * h2-transport.ts over protocol/h2) share: the stream a transport hands over, the connection view the
 * idle sweep and drain use, and the hooks a transport calls.
 */
import type { CallHeaders, CallStream, UnaryCall } from "./call.js";

/** TLS for the gRPC port. Without `clientCa` any client may connect; with it, mTLS is required. */
export interface TlsOptions {
  /** PEM certificate chain of the server. */
  readonly cert: string | Buffer;
  /** PEM private key of the server. */
  readonly key: string | Buffer;
  /** PEM CA bundle: when set, clients must present a certificate it signed (mTLS). */
  readonly clientCa?: string | Buffer;
}

/** A CallStream that can also answer plain HTTP (the 415 to a non-gRPC content-type). */
export interface AcceptStream extends CallStream {
  respondText(status: number, body: string): void;
}

/** What the idle sweep and drain need of a connection, whichever transport carries it. */
export interface Connection {
  /** Grows with the connection's traffic. */
  activity(): number;
  readonly closed: boolean;
  /** GOAWAY; ends once its calls finish. */
  close(): void;
  destroy(): void;
  onClose(listener: () => void): void;
  /** The idle sweep's last look: the activity count, and when it first saw that count. */
  seen?: { count: number; at: number };
}

/** What a transport calls back into the server with. */
export interface TransportHooks {
  /** A new stream's headers checked: its call, or undefined when it was answered (refused) already. */
  readonly accept: (stream: AcceptStream, headers: CallHeaders) => UnaryCall | undefined;
  /** A new connection, for the idle sweep and drain. */
  readonly addConnection: (c: Connection) => void;
  readonly onError: (err: unknown, where: string) => void;
}
