// A well-behaved gRPC client in a worker thread (its own event loop, so the attack code in the test
// thread does not delay it): one h2c connection, `rate` ShouldRateLimit calls per second, each with
// a deadline; reports every latency and the calls that did not succeed. Plain JS: a worker loads it.
import { connect } from "node:http2";
import { parentPort, workerData } from "node:worker_threads";

const { port, body, rate, deadlineMs } = workerData;
const frame = Buffer.from(body);
const session = connect(`http://127.0.0.1:${port}`);
session.on("error", () => {});
const latencies = [];
let failures = 0;
let timeouts = 0;
let pending = 0;
let stopping = false;

function call() {
  const sentAt = performance.now();
  pending++;
  let status = -1;
  let done = false;
  const finish = (ok) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    pending--;
    if (ok) latencies.push(performance.now() - sentAt);
    else failures++;
  };
  const timer = setTimeout(() => {
    timeouts++;
    finish(false);
  }, deadlineMs);
  let stream;
  try {
    stream = session.request({
      ":method": "POST",
      ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      "content-type": "application/grpc",
      te: "trailers",
    });
  } catch {
    finish(false);
    return;
  }
  const take = (h) => {
    if (h["grpc-status"] !== undefined) status = Number(h["grpc-status"]);
  };
  stream.on("response", take);
  stream.on("trailers", take);
  stream.on("data", () => {});
  stream.on("error", () => {});
  stream.on("close", () => finish(status === 0));
  stream.end(frame);
}

const interval = setInterval(() => {
  if (!stopping) call();
}, 1000 / rate);

parentPort.on("message", (msg) => {
  if (msg === "reset") {
    // Warmed up, or the quiet baseline measured: only what follows counts. Reports what came before.
    parentPort.postMessage({ latencies: [...latencies], failures, timeouts });
    latencies.length = 0;
    failures = 0;
    timeouts = 0;
    return;
  }
  if (msg !== "stop") return;
  stopping = true;
  clearInterval(interval);
  const wait = setInterval(() => {
    if (pending > 0) return;
    clearInterval(wait);
    session.close();
    parentPort.postMessage({ latencies, failures, timeouts });
  }, 10);
});
