/**
 * An xDS management server for tests, built with @grpc/grpc-js from the OFFICIAL Envoy protos
 * (envoy/service/discovery/v3/ads.proto in @grpc/grpc-js-xds' deps): it records every
 * DiscoveryRequest, and pushes state-of-the-world DiscoveryResponses of `RateLimitConfig`
 * resources (encoded with tollgate's copy of envoyproxy/ratelimit's rls_conf.proto) to the open
 * streams. Plaintext or TLS (optionally requiring a client certificate). Messages are plain objects
 * with the .proto's snake_case names (proto-loader `keepCase`).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { RateLimitConfigSchema } from "../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { LOADER_OPTIONS } from "./official-client.js";

const deps = join(dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")), "deps");

/** The RLS config resource type. */
export const RLS_TYPE = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/** A DiscoveryRequest as received. */
export interface ReceivedRequest {
  readonly stream: number;
  readonly version_info: string;
  readonly node: {
    id: string;
    metadata: { fields: Record<string, { stringValue?: string }> } | null;
  } | null;
  readonly type_url: string;
  readonly response_nonce: string;
  readonly error_detail: { code: number; message: string } | null;
}

/** A RateLimitConfig to push (protobuf-es init shape: camelCase fields, enum numbers). */
export type RateLimitConfigInit = MessageInitShape<typeof RateLimitConfigSchema>;

/** What to push: RateLimitConfigs, or raw Any resources (for bad types or bytes). */
export type Resources =
  | readonly RateLimitConfigInit[]
  | { readonly raw: readonly { type_url: string; value: Buffer }[] };

export interface XdsServer {
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** Streams opened so far. */
  streams(): number;
  /** Streams open now (ended, cancelled or failed ones left out). */
  openStreams(): number;
  /** Push a state of the world to every open stream; returns its nonce. */
  push(version: string, resources: Resources, typeUrl?: string): string;
  /** Resolves with the first request (from now on, or already received at `from`) that matches. */
  request(match: (r: ReceivedRequest) => boolean, from?: number): Promise<ReceivedRequest>;
  /** End every open stream with a gRPC error status. */
  endStreams(code?: grpc.status): void;
  close(): Promise<void>;
}

let adsCtor: grpc.ServiceClientConstructor | undefined;
function ads(): grpc.ServiceClientConstructor {
  adsCtor ??= (() => {
    const def = protoLoader.loadSync("envoy/service/discovery/v3/ads.proto", {
      ...LOADER_OPTIONS,
      includeDirs: ["envoy-api", "googleapis", "xds", "protoc-gen-validate"].map((d) => join(deps, d)),
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: grpc.ServiceClientConstructor } } };
      };
    };
    return pkg.envoy.service.discovery.v3.AggregatedDiscoveryService;
  })();
  return adsCtor;
}

function anyOf(resources: Resources): { type_url: string; value: Buffer }[] {
  if ("raw" in resources) return [...resources.raw];
  return resources.map((r) => ({
    type_url: RLS_TYPE,
    value: Buffer.from(toBinary(RateLimitConfigSchema, create(RateLimitConfigSchema, r))),
  }));
}

/** Options of {@link startXdsServer}. */
export interface XdsServerOptions {
  /** TLS material; plaintext without it. */
  readonly tls?: {
    readonly ca: Buffer;
    readonly cert: Buffer;
    readonly key: Buffer;
    readonly requireClientCert: boolean;
  };
  /** Port to bind on 127.0.0.1. @default a free one */
  readonly port?: number;
}

/** Start the server on 127.0.0.1. */
export async function startXdsServer(opts: XdsServerOptions = {}): Promise<XdsServer> {
  const tls = opts.tls;
  const server = new grpc.Server();
  const requests: ReceivedRequest[] = [];
  const open = new Set<grpc.ServerDuplexStream<unknown, unknown>>();
  let streams = 0;
  let nonces = 0;
  const waiters = new Set<() => void>();
  server.addService(ads().service, {
    StreamAggregatedResources(call: grpc.ServerDuplexStream<unknown, unknown>) {
      const stream = ++streams;
      open.add(call);
      call.on("data", (req: Omit<ReceivedRequest, "stream">) => {
        requests.push({ ...req, stream });
        for (const w of [...waiters]) w();
      });
      call.on("end", () => {
        open.delete(call);
        call.end();
      });
      call.on("error", () => open.delete(call));
      call.on("cancelled", () => open.delete(call));
    },
    DeltaAggregatedResources(call: grpc.ServerDuplexStream<unknown, unknown>) {
      call.emit("error", { code: grpc.status.UNIMPLEMENTED, details: "delta xDS not served" });
    },
  });
  const creds =
    tls === undefined
      ? grpc.ServerCredentials.createInsecure()
      : grpc.ServerCredentials.createSsl(
          tls.ca,
          [{ cert_chain: tls.cert, private_key: tls.key }],
          tls.requireClientCert,
        );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${opts.port ?? 0}`, creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    requests,
    streams: () => streams,
    openStreams: () => open.size,
    push(version, resources, typeUrl = RLS_TYPE) {
      const nonce = `n${++nonces}`;
      for (const call of open)
        call.write({ version_info: version, resources: anyOf(resources), type_url: typeUrl, nonce });
      return nonce;
    },
    request(match, from = requests.length) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`no matching DiscoveryRequest; received ${JSON.stringify(requests.slice(from))}`));
        }, 10_000);
        function look() {
          const found = requests.slice(from).find(match);
          if (found === undefined) return;
          clearTimeout(timer);
          waiters.delete(look);
          resolve(found);
        }
        waiters.add(look);
        look();
      });
    },
    endStreams(code = grpc.status.UNAVAILABLE) {
      for (const call of open) call.emit("error", { code, details: "test server ends the stream" });
      open.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}
