/**
 * Baseline: an @grpc/grpc-js RateLimitService built from the official Envoy protos whose handler
 * answers the fixed response without looking at the request (what a grpc-js based RLS costs before
 * it decides anything). Prints `LISTENING <port>` once bound.
 */
import * as grpc from "@grpc/grpc-js";
import { rlsMethod } from "../frames.mjs";
import { FIXED_RESPONSE } from "./response.mjs";

const server = new grpc.Server();
server.addService(
  { ShouldRateLimit: rlsMethod() },
  { ShouldRateLimit: (_call, callback) => callback(null, FIXED_RESPONSE) },
);
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`LISTENING ${port}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
