/**
 * A grpc-js Authorization client built from the OFFICIAL Envoy protos shipped in @grpc/grpc-js-xds,
 * connected to tollgate's Check method served by the lean gRPC transport.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { type CheckMethodOptions, createCheckMethod } from "../../src/protocol/ext-authz.js";
import { createGrpcServer } from "../../src/protocol/grpc/server.js";

const deps = join(dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json")), "deps");

/** The official Authorization service definition (plain-object messages, enums as names). */
function officialService(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync("envoy/service/auth/v3/external_auth.proto", {
    includeDirs: ["envoy-api", "googleapis", "xds", "protoc-gen-validate"].map((d) => join(deps, d)),
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    envoy: { service: { auth: { v3: { Authorization: grpc.ServiceClientConstructor } } } };
  };
  return pkg.envoy.service.auth.v3.Authorization;
}

/** A decoded official CheckResponse (proto-loader plain object). */
export interface OfficialCheckResponse {
  status?: { code?: number; message?: string };
  http_response?: "denied_response" | "ok_response";
  denied_response?: {
    status?: { code?: string };
    headers?: { header?: { key: string; value: string }; append_action?: string }[];
    body?: string;
  };
  ok_response?: {
    response_headers_to_add?: { header?: { key: string; value: string }; append_action?: string }[];
  };
}

/** A running server and a connected official client. */
export interface CheckHarness {
  check(request: object): Promise<OfficialCheckResponse>;
  close(): Promise<void>;
}

/** An official Authorization client of the server at `address` (`host:port`). */
export function createCheckClient(address: string): CheckHarness {
  const Client = officialService();
  const client = new Client(address, grpc.credentials.createInsecure());
  const call = client.Check as (
    request: object,
    cb: (err: grpc.ServiceError | null, res: OfficialCheckResponse) => void,
  ) => void;
  return {
    check: (request) =>
      new Promise((resolve, reject) =>
        call.call(client, request, (err, res) => (err ? reject(err) : resolve(res))),
      ),
    async close() {
      client.close();
    },
  };
}

/** Serve `method` on the lean gRPC transport (port 0) and connect an official client to it. */
export async function startCheckHarness(opts: CheckMethodOptions): Promise<CheckHarness> {
  const server = createGrpcServer({ methods: [createCheckMethod(opts)], maxMessageBytes: 4 * 1024 * 1024 });
  const { port } = await server.listen("127.0.0.1", 0);
  const client = createCheckClient(`127.0.0.1:${port}`);
  return {
    check: client.check,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** JSON → google.protobuf.Value as protobufjs encodes it (its bundled well-known types use camelCase names). */
function pbValue(v: unknown): object {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  return { structValue: pbStruct(v as Record<string, unknown>) };
}

/** JSON object → google.protobuf.Struct for a request sent with the official client. */
export const pbStruct = (o: Record<string, unknown>): object => ({
  fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, pbValue(v)])),
});
