/**
 * Before loading a target, send each pre-encoded frame once over node:http2 and check the answer is
 * a well-formed gRPC success (h2load only sees HTTP 200, which a gRPC error also is).
 */
import { connect } from "node:http2";
import { decodeResponse, RLS_PATH } from "./frames.mjs";

function call(session, frame) {
  return new Promise((resolve, reject) => {
    const req = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks = [];
    let status;
    req.on("response", (h) => {
      if (h["grpc-status"] !== undefined) status = h;
    });
    req.on("trailers", (t) => {
      status = t;
    });
    req.on("data", (d) => chunks.push(d));
    req.on("end", () => resolve({ status, body: Buffer.concat(chunks) }));
    req.on("error", reject);
    req.end(frame);
  });
}

/**
 * Send every frame once; resolve to the overall codes seen (`{ OK: n, OVER_LIMIT: m }`), reject on a
 * gRPC error or an UNKNOWN code.
 */
export async function probe(port, frames) {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on("error", () => {});
  try {
    const codes = {};
    for (const frame of frames) {
      const { status, body } = await call(session, frame);
      if (status?.["grpc-status"] !== "0") {
        throw new Error(`grpc-status ${status?.["grpc-status"]}: ${status?.["grpc-message"] ?? ""}`);
      }
      const code = decodeResponse(body).overall_code;
      if (code !== "OK" && code !== "OVER_LIMIT") throw new Error(`overall_code ${code}`);
      codes[code] = (codes[code] ?? 0) + 1;
    }
    return codes;
  } finally {
    session.close();
  }
}
