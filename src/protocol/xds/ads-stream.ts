/**
 * One `StreamAggregatedResources` call (xDS ADS, state of the world) over node:http2: a
 * bidirectional gRPC stream on its own HTTP/2 connection, h2c or TLS. Requests are written as they
 * are sent, responses handed out as they complete; the first end of any kind (connection error,
 * reset, trailers, a PING the server does not answer) is reported once, with the reason.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect } from "node:http2";
import { isIP } from "node:net";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../gen/envoy/service/discovery/v3/discovery_pb.js";
import { frame } from "../grpc/framing.js";
import { MessageReader } from "./message-reader.js";

const PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** Where the xDS server is and how to reach it. */
export interface AdsTarget {
  readonly host: string;
  readonly port: number;
  /** TLS (with optional CA, client certificate and expected server name); undefined = h2c. */
  readonly tls?: {
    readonly ca?: Buffer;
    readonly cert?: Buffer;
    readonly key?: Buffer;
    readonly serverName?: string;
  };
  /** Extra request metadata (e.g. authorization). */
  readonly headers: Readonly<Record<string, string>>;
}

/** What a stream reports. */
export interface AdsStreamEvents {
  onResponse(response: DiscoveryResponse): void;
  /** Called once, when the stream is over; `error` says why. */
  onEnd(error: Error): void;
}

/** Stream options. */
export interface AdsStreamOptions {
  /** Largest response message, bytes. @default 64 MiB */
  readonly maxMessageBytes?: number;
  /** PING the server this often and end the stream when it does not answer within the same time. @default 30000 */
  readonly keepaliveMs?: number;
}

/** An open ADS stream. */
export class AdsStream {
  readonly #session: ClientHttp2Session;
  readonly #stream: ClientHttp2Stream;
  readonly #events: AdsStreamEvents;
  readonly #keepalive: NodeJS.Timeout;
  #ended = false;
  #grpcStatus: string | undefined;
  #grpcMessage = "";

  constructor(target: AdsTarget, events: AdsStreamEvents, opts: AdsStreamOptions = {}) {
    this.#events = events;
    const host = isIP(target.host) === 6 ? `[${target.host}]` : target.host;
    const tls = target.tls;
    this.#session = connect(
      `${tls === undefined ? "http" : "https"}://${host}:${target.port}`,
      tls === undefined
        ? {}
        : {
            ...(tls.ca === undefined ? {} : { ca: tls.ca }),
            ...(tls.cert === undefined ? {} : { cert: tls.cert }),
            ...(tls.key === undefined ? {} : { key: tls.key }),
            servername: tls.serverName ?? (isIP(target.host) === 0 ? target.host : ""),
            ALPNProtocols: ["h2"],
          },
    );
    this.#session.on("error", (err) => this.#end(err));
    this.#stream = this.#session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-accept-encoding": "identity",
      "user-agent": "tollgate-xds",
      ...target.headers,
    });
    const reader = new MessageReader(opts.maxMessageBytes ?? 64 * 1024 * 1024);
    this.#stream.on("response", (headers) => {
      const status = headers[":status"];
      if (status !== 200) this.#end(new Error(`the xDS server answered HTTP ${String(status)}`));
      this.#trailers(headers);
    });
    this.#stream.on("data", (chunk: Buffer) => {
      let messages: Uint8Array[];
      try {
        messages = reader.push(chunk);
      } catch (err) {
        this.#end(err as Error);
        return;
      }
      for (const bytes of messages) {
        if (this.#ended) return;
        let response: DiscoveryResponse;
        try {
          response = fromBinary(DiscoveryResponseSchema, bytes);
        } catch (err) {
          this.#end(new Error(`undecodable DiscoveryResponse: ${(err as Error).message}`));
          return;
        }
        this.#events.onResponse(response);
      }
    });
    this.#stream.on("trailers", (trailers) => this.#trailers(trailers));
    this.#stream.on("error", (err) => this.#end(err));
    // The server's half ends with its trailers (our half stays open, so "close" would wait for us).
    const ended = () => {
      const why =
        this.#grpcStatus === undefined
          ? "the stream closed without a gRPC status"
          : `the server ended the stream with grpc-status ${this.#grpcStatus}${this.#grpcMessage ? ` (${this.#grpcMessage})` : ""}`;
      this.#end(new Error(why));
    };
    this.#stream.on("end", ended);
    this.#stream.on("close", ended);
    const every = opts.keepaliveMs ?? 30_000;
    this.#keepalive = setInterval(() => this.#ping(every), every);
    this.#keepalive.unref();
  }

  /** Send one request (subscription, ACK or NACK); ignored once the stream ended. */
  send(request: DiscoveryRequest): void {
    if (this.#ended) return;
    this.#stream.write(frame(toBinary(DiscoveryRequestSchema, request)));
  }

  /** End the stream and its connection; no event follows. */
  close(): void {
    this.#ended = true;
    this.#stop();
  }

  #trailers(headers: Record<string, unknown>): void {
    const status = headers["grpc-status"];
    if (status !== undefined) this.#grpcStatus = String(status);
    const message = headers["grpc-message"];
    if (message !== undefined) this.#grpcMessage = decodeURIComponent(String(message));
  }

  #ping(timeoutMs: number): void {
    const timer = setTimeout(
      () => this.#end(new Error(`the xDS server did not answer a PING within ${timeoutMs} ms`)),
      timeoutMs,
    );
    timer.unref();
    const sent = this.#session.ping((err) => {
      clearTimeout(timer);
      if (err !== null) this.#end(err);
    });
    if (!sent) clearTimeout(timer);
  }

  #stop(): void {
    clearInterval(this.#keepalive);
    this.#stream.close();
    this.#session.destroy();
  }

  #end(error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop();
    this.#events.onEnd(error);
  }
}
