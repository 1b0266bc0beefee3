/**
 * Baseline (opt-in, `--modes transport`): tollgate's own gRPC transport (dist/protocol/grpc) with a
 * method that decodes nothing and answers the baselines' fixed response. Next to `raw` it shows what
 * the transport itself costs over bare node:http2; next to `memory`, what the decision costs.
 * Needs `npm run build`. Prints `LISTENING <port>` once bound.
 */
import { createGrpcServer } from "../../dist/protocol/grpc/server.js";
import { grpcFrame, RLS_PATH, rlsMethod } from "../frames.mjs";
import { FIXED_RESPONSE } from "./response.mjs";

const framed = grpcFrame(rlsMethod().responseSerialize(FIXED_RESPONSE));
const body = framed.subarray(5);

const server = createGrpcServer({
  methods: [
    {
      path: RLS_PATH,
      decode: (bytes) => bytes,
      encode: () => body,
      encodeFramed: () => framed,
      handle: (input) => input,
    },
  ],
  maxMessageBytes: 1 << 20,
});
const address = await server.listen("127.0.0.1", 0);
process.stdout.write(`LISTENING ${address.port}\n`);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
