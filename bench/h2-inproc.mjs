/**
 * The own HTTP/2 transport alone, in process: unary calls (HEADERS + DATA with END_STREAM, answered at
 * once with HEADERS + DATA + trailers) fed to H2Connection over a fake socket, 1,000 calls per
 * connection. Prints CPU ns per call (user + system of this process, so time spent waiting for a core
 * on a loaded machine does not count), the median of `rounds` runs. For same-sitting A/B of transport
 * changes without h2load and the rest of the machine in the loop:
 *
 *   node bench/h2-inproc.mjs [distDir=dist] [calls=200000] [rounds=7]
 *
 * e.g. `git archive main | tar -x -C /tmp/old`, build there, then alternate
 * `node bench/h2-inproc.mjs /tmp/old/dist` and `node bench/h2-inproc.mjs dist`.
 *
 * Several builds, comma-separated (`node bench/h2-inproc.mjs /tmp/old/dist,dist 100000 15`), run in
 * one process, round by round in alternating order (A B, B A, …), each with its own JIT state: a
 * loaded machine then slows every build's rounds alike, and the ratio to the first build is printed.
 */
import { EventEmitter } from "node:events";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dists = (process.argv[2] ?? "dist").split(",").map((d) => resolve(d));
const calls = Number(process.argv[3] ?? 200_000);
const rounds = Number(process.argv[4] ?? 7);
const PER_CONNECTION = 1000;

const builds = [];
for (const dist of dists) {
  const { H2Connection } = await import(pathToFileURL(`${dist}/protocol/h2/connection.js`).href);
  builds.push({ dist, H2Connection });
}
const { literalField, PREFACE, responseBlock, fieldsBlock } = await import(
  pathToFileURL(`${dists[0]}/protocol/h2/frames.js`).href
);

function frame(type, flags, id, payload) {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(id, 5);
  payload.copy(out, 9);
  return out;
}

const block = Buffer.from(
  [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"],
    [":authority", "tollgate"],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
    ["grpc-timeout", "20m"],
    ["user-agent", "envoy/1.31"],
  ].flatMap(([n, v]) => literalField(n, v)),
);
const message = Buffer.alloc(5 + 60, 1);
message[0] = 0;
message.writeUInt32BE(60, 1);
// One connection's input: preface, SETTINGS, then PER_CONNECTION calls on ids 1, 3, 5, …
const input = Buffer.concat([
  PREFACE,
  frame(4, 0, 0, Buffer.alloc(0)),
  ...Array.from({ length: PER_CONNECTION }, (_, i) => [
    frame(1, 0x4, 2 * i + 1, block),
    frame(0, 0x1, 2 * i + 1, message),
  ]).flat(),
]);
const okHeaders = responseBlock(200, [["content-type", "application/grpc"]]);
const okTrailers = fieldsBlock([["grpc-status", "0"]]);
const answer = Buffer.alloc(5 + 20, 2);

class FakeSocket extends EventEmitter {
  destroyed = false;
  remoteAddress = "127.0.0.1";
  written = 0;
  setNoDelay() {}
  write(chunk) {
    this.written += chunk.length;
    return true;
  }
  pause() {}
  resume() {}
  end() {
    this.destroyed = true;
  }
  destroy() {
    this.destroyed = true;
  }
}

const onStream = (s) => {
  s.handler = {
    push() {},
    run() {
      s.respond(okHeaders, answer, okTrailers);
    },
    closed() {},
  };
};
const onError = (err) => {
  throw err;
};

async function run(H2Connection, n) {
  const start = process.cpuUsage();
  for (let done = 0; done < n; done += PER_CONNECTION) {
    const socket = new FakeSocket();
    new H2Connection(socket, { onStream, onError });
    // Chunks of 16 KiB, as a socket would deliver them.
    for (let off = 0; off < input.length; off += 16_384)
      socket.emit("data", input.subarray(off, off + 16_384));
    await new Promise((r) => setImmediate(r)); // the writer's flush
    if (socket.written === 0) throw new Error("nothing answered");
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n;
}

for (const b of builds) await run(b.H2Connection, calls / 4); // warm-up
const results = builds.map(() => []);
for (let i = 0; i < rounds; i++) {
  for (let k = 0; k < builds.length; k++) {
    const j = i % 2 === 0 ? k : builds.length - 1 - k;
    results[j].push(await run(builds[j].H2Connection, calls));
  }
}
const medians = results.map((r) => r.sort((a, b) => a - b)[Math.floor(rounds / 2)]);
builds.forEach((b, j) => {
  const r = results[j];
  const ratio = j === 0 ? "" : `, ×${(medians[j] / medians[0]).toFixed(3)} of the first`;
  console.log(
    `${b.dist}: ${medians[j].toFixed(0)} CPU ns/call (median of ${rounds}; min ${r[0].toFixed(0)}, max ${r.at(-1).toFixed(0)}${ratio})`,
  );
});
