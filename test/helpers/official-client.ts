/**
 * @grpc/grpc-js clients for integration tests: RateLimitService built with @grpc/proto-loader from the
 * OFFICIAL Envoy protos shipped in @grpc/grpc-js-xds (deps/envoy-api + googleapis, xds,
 * protoc-gen-validate), and grpc.health.v1 from tollgate's own proto/ (the package ships no health
 * proto). Using Envoy's files, not ours, is what makes these tests prove wire compatibility.
 *
 * Messages are plain objects shaped by the proto-loader options below ({@link LOADER_OPTIONS}):
 * - `keepCase: true`: snake_case field names as in the .proto (`overall_code`, `limit_remaining`);
 * - `longs: Number`: 64-bit fields (Duration.seconds, UInt64Value.value) as numbers;
 * - `enums: String`: enum values as names (`"OK"`, `"OVER_LIMIT"`, `"SERVING"`);
 * - `defaults: true`: absent scalar fields are filled with their default (`limit_remaining: 0`),
 *   absent message fields are `null`;
 * - `oneofs: true`: a virtual field names the set member of each oneof.
 * Note: the official copy in @grpc/grpc-js-xds predates per-descriptor `hits_addend`,
 * `is_negative_hits` and unit WEEK: pass `overlay: ratelimitOverlay()` (ratelimit-overlay.ts) for a
 * client whose RateLimitDescriptor has the first two, added to a copy of the official file.
 */
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const deps = join(dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")), "deps");
const ourProtos = resolve(import.meta.dirname, "../../proto");

/** proto-loader options used for every client here (see the module comment). */
export const LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

/** An official RateLimitResponse as decoded by proto-loader with {@link LOADER_OPTIONS}. */
export interface OfficialRateLimitResponse {
  overall_code: "UNKNOWN" | "OK" | "OVER_LIMIT";
  statuses: {
    code: "UNKNOWN" | "OK" | "OVER_LIMIT";
    current_limit: { requests_per_unit: number; unit: string; name: string } | null;
    limit_remaining: number;
    duration_until_reset: { seconds: number; nanos: number } | null;
  }[];
  response_headers_to_add: { key: string; value: string }[];
  request_headers_to_add: { key: string; value: string }[];
}

/** Per-call options. */
export interface CallOptions {
  /** Sets grpc-timeout. */
  readonly deadlineMs?: number;
  /** Extra request metadata. */
  readonly metadata?: Readonly<Record<string, string>>;
}

export interface RlsClient {
  /** `ShouldRateLimit`; rejects with a grpc-js ServiceError (`code`, `details`) on a non-OK status. */
  shouldRateLimit(request: object, opts?: CallOptions): Promise<OfficialRateLimitResponse>;
  close(): void;
}

export interface HealthClient {
  /** `grpc.health.v1.Health/Check`; resolves to the status name (`"SERVING"`, `"NOT_SERVING"`). */
  check(service: string): Promise<string>;
  close(): void;
}

/** How to reach the server: plaintext (default) or TLS with optional client certificate. */
export interface ClientTls {
  readonly ca: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** Overrides the name checked against the server certificate. */
  readonly serverName?: string;
}

type Ctor = grpc.ServiceClientConstructor;

/** RateLimitService constructors by overlay directory ("" for none). */
const rlsCtors = new Map<string, Ctor>();
let healthCtor: Ctor | undefined;

/** `overlay`: a directory searched before the official ones, holding patched copies of their files. */
function loadRls(overlay = ""): Ctor {
  let ctor = rlsCtors.get(overlay);
  if (ctor === undefined) {
    const official = ["envoy-api", "googleapis", "xds", "protoc-gen-validate"].map((d) => join(deps, d));
    const def = protoLoader.loadSync("envoy/service/ratelimit/v3/rls.proto", {
      ...LOADER_OPTIONS,
      includeDirs: overlay === "" ? official : [overlay, ...official],
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      envoy: { service: { ratelimit: { v3: { RateLimitService: Ctor } } } };
    };
    ctor = pkg.envoy.service.ratelimit.v3.RateLimitService;
    rlsCtors.set(overlay, ctor);
  }
  return ctor;
}

function loadHealth(): Ctor {
  healthCtor ??= (() => {
    const def = protoLoader.loadSync("grpc/health/v1/health.proto", {
      ...LOADER_OPTIONS,
      includeDirs: [ourProtos],
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { grpc: { health: { v1: { Health: Ctor } } } };
    return pkg.grpc.health.v1.Health;
  })();
  return healthCtor;
}

function credentials(tls: ClientTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null);
}

function channelOptions(tls: ClientTls | undefined): grpc.ChannelOptions {
  return tls?.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {};
}

type UnaryFn = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => void;

function call<T>(client: grpc.Client, name: string, req: object, opts: CallOptions = {}): Promise<T> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(opts.metadata ?? {})) md.set(k, v);
  const callOpts: grpc.CallOptions =
    opts.deadlineMs === undefined ? {} : { deadline: Date.now() + opts.deadlineMs };
  const fn = (client as unknown as Record<string, UnaryFn>)[name];
  if (!fn) throw new Error(`client has no method ${name}`);
  return new Promise((ok, fail) => {
    fn.call(client, req, md, callOpts, (err, res) => (err ? fail(err) : ok(res as T)));
  });
}

/** Await a call expected to fail and return its grpc-js ServiceError (throws if it succeeded). */
export async function callError(call: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await call;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error("expected the call to fail");
}

/**
 * An official RateLimitService client for `address` (`host:port`); `overlay`: a directory of patched
 * copies of official files, searched first (see the module comment).
 */
export function createRlsClient(address: string, tls?: ClientTls, overlay?: string): RlsClient {
  const Client = loadRls(overlay);
  const client = new Client(address, credentials(tls), channelOptions(tls));
  return {
    shouldRateLimit: (req, opts) => call<OfficialRateLimitResponse>(client, "ShouldRateLimit", req, opts),
    close: () => client.close(),
  };
}

/** A grpc.health.v1 client for `address` (`host:port`). */
export function createHealthClient(address: string, tls?: ClientTls): HealthClient {
  const Client = loadHealth();
  const client = new Client(address, credentials(tls), channelOptions(tls));
  return {
    check: async (service) => (await call<{ status: string }>(client, "Check", { service })).status,
    close: () => client.close(),
  };
}
