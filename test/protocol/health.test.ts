import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGrpcServer, type GrpcServer } from "../../src/protocol/grpc/server.js";
import { Status } from "../../src/protocol/grpc/status.js";
import { HealthState, healthMethod } from "../../src/protocol/health.js";
import { callError, createHealthClient, type HealthClient } from "../helpers/official-client.js";

let server: GrpcServer;
let client: HealthClient;
const state = new HealthState();

beforeAll(async () => {
  server = createGrpcServer({ methods: [healthMethod(state)], maxMessageBytes: 1024 });
  const { port } = await server.listen("127.0.0.1", 0);
  client = createHealthClient(`127.0.0.1:${port}`);
});

afterAll(async () => {
  client.close();
  await server.close();
});

describe("grpc.health.v1 Check", () => {
  it("reports NOT_SERVING before the first config load", async () => {
    expect(await client.check("")).toBe("NOT_SERVING");
  });

  it("reports SERVING for the server and for the tollgate service once serving", async () => {
    state.setServing(true);
    expect(await client.check("")).toBe("SERVING");
    expect(await client.check("tollgate")).toBe("SERVING");
  });

  it("reports NOT_SERVING again while draining", async () => {
    state.setServing(true);
    state.setServing(false);
    expect(await client.check("tollgate")).toBe("NOT_SERVING");
  });

  it("answers NOT_FOUND for a service it does not know", async () => {
    const err = await callError(client.check("envoy.service.ratelimit.v3.Other"));
    expect(err.code).toBe(Status.NOT_FOUND);
  });
});
