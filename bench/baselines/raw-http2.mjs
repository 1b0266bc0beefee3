/**
 * Baseline: the ceiling of any Node HTTP/2 service. A bare node:http2 h2c server that reads the
 * request body and answers every stream with one fixed, pre-encoded gRPC response and `grpc-status: 0`
 * trailers. No routing, no decoding. Prints `LISTENING <port>` once bound.
 */
import { createServer } from "node:http2";
import { grpcFrame, rlsMethod } from "../frames.mjs";
import { FIXED_RESPONSE } from "./response.mjs";

const body = grpcFrame(rlsMethod().responseSerialize(FIXED_RESPONSE));
const headers = { ":status": 200, "content-type": "application/grpc" };
const trailers = { "grpc-status": "0" };

const server = createServer();
server.on("stream", (stream) => {
  stream.on("data", () => {});
  stream.on("end", () => {
    stream.respond(headers, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers(trailers));
    stream.end(body);
  });
  stream.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
