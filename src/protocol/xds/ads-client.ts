/**
 * The xDS config client: subscribes to `RateLimitConfig` resources over ADS (state of the world),
 * as envoyproxy/ratelimit's `CONFIG_TYPE=GRPC_XDS_SOTW` provider does, and keeps subscribed.
 *
 * - Each stream opens with a DiscoveryRequest naming the node, the type URL and the version last
 *   applied ("" at first), so a server that restarts or a reconnect does not resend in vain.
 * - Each response is handed out as a push, whose `ack()` sends the response's version and nonce
 *   and `nack(message)` sends the last applied version, the nonce and `error_detail` (code
 *   INVALID_ARGUMENT, the message: what was wrong, for the control plane's logs). Resources of
 *   another type, or that do not decode, are NACKed here without a push.
 * - A stream that ends (connection refused or lost, reset, trailers, an unanswered PING) is opened
 *   again after a backoff: `initialMs`, doubling per failed attempt up to `maxMs`, each wait drawn
 *   from ±`jitter` of itself; it starts over once a stream has delivered a response.
 */
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../gen/envoy/service/discovery/v3/discovery_pb.js";
import { openDurationMs } from "../../store/guard/backoff.js";
import { Status } from "../grpc/status.js";
import { AdsStream, type AdsTarget } from "./ads-stream.js";
import { decodeRlsConfigs, RLS_CONFIG_TYPE_URL, type RlsConfigResource } from "./rls-config.js";

/** One state-of-the-world update: every resource, to apply and then ACK, or to refuse with a NACK. */
export interface RlsConfigPush {
  readonly version: string;
  readonly resources: readonly RlsConfigResource[];
  /** Report the update applied. */
  ack(): void;
  /** Report the update refused, with the reason the control plane will see. */
  nack(message: string): void;
}

/** What the client tells its owner, for logs. */
export type AdsEvent =
  | { readonly kind: "connected" }
  | { readonly kind: "disconnected"; readonly error: string; readonly retryInMs: number }
  | { readonly kind: "refused"; readonly version: string; readonly error: string };

/** Options of {@link AdsClient}. */
export interface AdsClientOptions {
  readonly target: AdsTarget;
  readonly nodeId: string;
  /** `node.metadata`, string values. */
  readonly nodeMetadata: Readonly<Record<string, string>>;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number; readonly jitter: number };
  readonly onPush: (push: RlsConfigPush) => void;
  readonly onEvent?: (event: AdsEvent) => void;
  /** In [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Keepalive PING interval of each stream, ms. @default 30000 */
  readonly keepaliveMs?: number;
}

/** A subscription that reconnects until closed. */
export class AdsClient {
  readonly #opts: AdsClientOptions;
  #stream: AdsStream | undefined;
  #timer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #applied = "";
  #closed = false;

  constructor(opts: AdsClientOptions) {
    this.#opts = opts;
  }

  /** Open the first stream. */
  start(): void {
    this.#open();
  }

  /** Close the stream and stop reconnecting. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#stream?.close();
  }

  #request(fields: { responseNonce?: string; error?: string }): DiscoveryRequest {
    const metadata: JsonObject = { ...this.#opts.nodeMetadata };
    return create(DiscoveryRequestSchema, {
      node: { id: this.#opts.nodeId, metadata, userAgentName: "tollgate" },
      typeUrl: RLS_CONFIG_TYPE_URL,
      versionInfo: this.#applied,
      responseNonce: fields.responseNonce ?? "",
      ...(fields.error === undefined
        ? {}
        : { errorDetail: { code: Status.INVALID_ARGUMENT, message: fields.error } }),
    });
  }

  #open(): void {
    if (this.#closed) return;
    let delivered = false;
    const stream = new AdsStream(
      this.#opts.target,
      {
        onResponse: (response) => {
          if (!delivered) {
            delivered = true;
            this.#attempt = 0;
            this.#opts.onEvent?.({ kind: "connected" });
          }
          this.#receive(stream, response);
        },
        onEnd: (error) => {
          if (this.#closed || this.#stream !== stream) return;
          const retryInMs = openDurationMs(
            {
              baseMs: this.#opts.backoff.initialMs,
              maxMs: this.#opts.backoff.maxMs,
              multiplier: 2,
              jitter: this.#opts.backoff.jitter,
            },
            this.#attempt,
            this.#opts.random ?? Math.random,
          );
          this.#attempt += 1;
          this.#opts.onEvent?.({ kind: "disconnected", error: error.message, retryInMs });
          this.#timer = setTimeout(() => this.#open(), retryInMs);
        },
      },
      this.#opts.keepaliveMs === undefined ? {} : { keepaliveMs: this.#opts.keepaliveMs },
    );
    this.#stream = stream;
    stream.send(this.#request({}));
  }

  #receive(stream: AdsStream, response: DiscoveryResponse): void {
    const nonce = response.nonce;
    const nack = (message: string) => stream.send(this.#request({ responseNonce: nonce, error: message }));
    let resources: RlsConfigResource[];
    try {
      if (response.typeUrl !== RLS_CONFIG_TYPE_URL)
        throw new Error(
          `response has type ${JSON.stringify(response.typeUrl)}, expected ${RLS_CONFIG_TYPE_URL}`,
        );
      resources = decodeRlsConfigs(response.resources);
    } catch (err) {
      const error = (err as Error).message;
      this.#opts.onEvent?.({ kind: "refused", version: response.versionInfo, error });
      nack(error);
      return;
    }
    this.#opts.onPush({
      version: response.versionInfo,
      resources,
      ack: () => {
        this.#applied = response.versionInfo;
        stream.send(this.#request({ responseNonce: nonce }));
      },
      nack,
    });
  }
}
