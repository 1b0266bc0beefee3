// A simulated Envoy rate_limit_quota filter for tests and bench/rlqs.mjs, on the OFFICIAL Envoy
// protos (@grpc/grpc-js-xds deps/envoy-api via @grpc/proto-loader, @grpc/grpc-js). It behaves like
// Envoy's filter (source/extensions/filters/http/rate_limit_quota/global_client_impl.cc):
// - a new bucket's first request is decided by no_assignment_behavior and reported at once
//   (time_elapsed 0); then every reporting interval, all buckets are reported (whole seconds elapsed);
// - a token bucket assignment becomes a bucket that starts full (max_tokens) and fills at
//   tokens_per_fill / whole seconds of fill_interval per second; an identical assignment keeps the
//   running bucket, a different one starts a new one;
// - assignment_time_to_live (whole seconds) restarts at every assignment; on expiry the bucket falls
//   back to expired_assignment_behavior (here: the no-assignment behaviour);
// - abandon_action drops the bucket; a stream that ends is reopened at the next report tick.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const deps = join(dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")), "deps");
let ctor;
function serviceCtor() {
  ctor ??= (() => {
    const def = protoLoader.loadSync("envoy/service/rate_limit_quota/v3/rlqs.proto", {
      keepCase: true,
      longs: Number,
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: ["envoy-api", "googleapis", "xds", "protoc-gen-validate"].map((d) => join(deps, d)),
    });
    return grpc.loadPackageDefinition(def).envoy.service.rate_limit_quota.v3.RateLimitQuotaService;
  })();
  return ctor;
}

/** Canonical key of a BucketId map (Envoy hashes the map: order-free). */
export const bucketKey = (bucket) => JSON.stringify(Object.entries(bucket).sort());

/** Envoy's token bucket of one assignment (also test/helpers/rlqs-sim.ts's Envoys). */
export class TokenBucket {
  constructor(spec, now) {
    this.max = spec.max_tokens;
    this.rate = (spec.tokens_per_fill?.value ?? 1) / Math.trunc(Number(spec.fill_interval?.seconds ?? 0));
    this.tokens = this.max; // Envoy's AtomicTokenBucketImpl starts full
    this.at = now;
    this.spec = `${spec.max_tokens}/${spec.tokens_per_fill?.value}/${spec.fill_interval?.nanos}`;
  }
  take(now) {
    this.tokens = Math.min(this.max, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** One simulated Envoy: `request(bucket)` decides locally; usage goes to the RLQS server. */
export class SimEnvoy {
  /**
   * @param {{ address: string, domain: string, reportingIntervalMs: number,
   *   noAssignment?: "allow" | "deny", now?: () => number }} opts
   */
  constructor(opts) {
    this.opts = opts;
    this.now = opts.now ?? (() => performance.now());
    this.client = new (serviceCtor())(opts.address, grpc.credentials.createInsecure());
    /** key → { bucket, allowed, denied, lastReport, action, tokenBucket, expiry } */
    this.buckets = new Map();
    this.stream = undefined;
    this.reportsSent = 0;
    /** performance.now() of every report message sent. */
    this.reportTimes = [];
    /** Every token bucket assignment received: { at, key, rate } (rate in req/s). */
    this.assignments = [];
    this.responses = 0;
    this.streamEnds = [];
    this.timer = setInterval(() => this.#tick(), opts.reportingIntervalMs);
  }

  #open() {
    if (this.stream) return this.stream;
    const stream = this.client.StreamRateLimitQuotas();
    stream.on("data", (res) => this.#onResponse(res));
    stream.on("error", (err) => {
      this.streamEnds.push({ code: err.code, details: err.details });
      if (this.stream === stream) this.stream = undefined;
    });
    stream.on("status", (st) => {
      if (st.code === 0) this.streamEnds.push({ code: 0, details: st.details });
      if (this.stream === stream) this.stream = undefined;
    });
    stream.on("end", () => {
      if (this.stream === stream) this.stream = undefined;
    });
    this.stream = stream;
    return stream;
  }

  #usage(b, now) {
    b.log?.push({ at: now, allowed: b.allowed, denied: b.denied });
    const u = {
      bucket_id: { bucket: b.bucket },
      time_elapsed: { seconds: Math.trunc((now - b.lastReport) / 1000), nanos: 0 },
      num_requests_allowed: b.allowed,
      num_requests_denied: b.denied,
    };
    b.allowed = 0;
    b.denied = 0;
    b.lastReport = now;
    return u;
  }

  #send(usages) {
    if (usages.length === 0) return;
    this.#open().write({ domain: this.opts.domain, bucket_quota_usages: usages });
    this.reportsSent++;
    this.reportTimes.push(this.now());
  }

  #tick() {
    const now = this.now();
    this.#send([...this.buckets.values()].map((b) => this.#usage(b, now)));
  }

  #onResponse(res) {
    this.responses++;
    const now = this.now();
    for (const action of res.bucket_action) {
      const b = this.buckets.get(bucketKey(action.bucket_id?.bucket ?? {}));
      if (!b) continue;
      if (action.bucket_action === "abandon_action") {
        clearTimeout(b.expiry);
        this.buckets.delete(bucketKey(b.bucket));
        continue;
      }
      const qa = action.quota_assignment_action;
      const strategy = qa.rate_limit_strategy;
      clearTimeout(b.expiry);
      if (strategy.strategy === "token_bucket") {
        const next = new TokenBucket(strategy.token_bucket, now);
        this.assignments.push({ at: now, key: bucketKey(b.bucket), rate: next.rate });
        if (!b.tokenBucket || b.tokenBucket.spec !== next.spec) b.tokenBucket = next;
        b.action = "token_bucket";
      } else {
        b.tokenBucket = undefined;
        b.action = strategy.blanket_rule;
      }
      const ttlMs = Number(qa.assignment_time_to_live?.seconds ?? 0) * 1000;
      b.expiry = setTimeout(() => {
        b.action = undefined;
        b.tokenBucket = undefined;
        b.expired = (b.expired ?? 0) + 1;
      }, ttlMs);
    }
  }

  /** Decide one request for `bucket` (a plain map): true when allowed. */
  request(bucket) {
    const now = this.now();
    const key = bucketKey(bucket);
    let b = this.buckets.get(key);
    const fresh = b === undefined;
    if (!b) {
      b = {
        bucket,
        allowed: 0,
        denied: 0,
        lastReport: now,
        action: undefined,
        tokenBucket: undefined,
        log: [],
      };
      this.buckets.set(key, b);
    }
    let allowed;
    if (b.action === "token_bucket") allowed = b.tokenBucket.take(now);
    else if (b.action === "DENY_ALL") allowed = false;
    else if (b.action === "ALLOW_ALL") allowed = true;
    else allowed = (this.opts.noAssignment ?? "allow") === "allow";
    if (allowed) b.allowed++;
    else b.denied++;
    if (fresh) this.#send([this.#usage(b, now)]);
    return allowed;
  }

  /** Every usage `bucket` reported: { at, allowed, denied } (counts of the interval ending at `at`). */
  usageLog(bucket) {
    return this.buckets.get(bucketKey(bucket))?.log ?? [];
  }

  /** The current token bucket rate of `bucket` (req/s), or undefined. */
  rateOf(bucket) {
    return this.buckets.get(bucketKey(bucket))?.tokenBucket?.rate;
  }

  close() {
    clearInterval(this.timer);
    for (const b of this.buckets.values()) clearTimeout(b.expiry);
    this.stream?.end();
    this.client.close();
  }
}

/**
 * Drive `envoy.request(bucket)` at `rate()` requests per second (read every tick) until stopped.
 * Returns counters of allowed and denied requests.
 */
export function drive(envoy, bucket, rate, tickMs = 10) {
  const counts = { allowed: 0, denied: 0 };
  let carry = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    carry += (rate() * (now - last)) / 1000;
    last = now;
    while (carry >= 1) {
      carry -= 1;
      if (envoy.request(bucket)) counts.allowed++;
      else counts.denied++;
    }
  }, tickMs);
  return { counts, stop: () => clearInterval(timer) };
}
