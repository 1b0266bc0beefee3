/**
 * Baseline: the ceiling of any Node HTTP/2 service. A bare node:http2 h2c server that reads the
 * request body and answers every stream with one fixed, pre-encoded gRPC response and `grpc-status: 0`
 * trailers. No routing, no decoding. Prints `LISTENING <port>` once bound.
 *
 * `--workers N` (N > 1): N such servers in node:cluster workers sharing one listen socket, as
 * tollgate's `--workers` does (the ceiling to read a multi-worker tollgate against).
 */
import cluster from "node:cluster";
import { createServer } from "node:http2";
import { parseArgs } from "node:util";
import { grpcFrame, rlsMethod } from "../frames.mjs";
import { FIXED_RESPONSE } from "./response.mjs";

const body = grpcFrame(rlsMethod().responseSerialize(FIXED_RESPONSE));
const headers = { ":status": 200, "content-type": "application/grpc" };
const trailers = { "grpc-status": "0" };

const workers = Number(parseArgs({ options: { workers: { type: "string", default: "1" } } }).values.workers);

if (workers > 1 && cluster.isPrimary) {
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.once("message", (_worker, message) => process.stdout.write(`LISTENING ${message.port}\n`));
  cluster.on("exit", (_worker, code, signal) => {
    if (!stopping) {
      process.stderr.write(`raw worker exited (${code ?? signal})\n`);
      process.exit(1);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
  process.on("SIGTERM", () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
  });
} else {
  serve();
}

function serve() {
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
  // In a cluster worker, port 0 is chosen once by the primary and shared by every worker.
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    if (cluster.isWorker) process.send?.({ port });
    else process.stdout.write(`LISTENING ${port}\n`);
  });
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
