import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createGrpcServer,
  type GrpcServer,
  type GrpcTransport,
  type TlsOptions,
} from "../../../src/protocol/grpc/server.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import { HealthState, healthMethod } from "../../../src/protocol/health.js";
import { callError, createHealthClient } from "../../helpers/official-client.js";
import { makeTestCerts } from "../../helpers/test-certs.js";

let dir: string;
const pem: Record<string, Buffer> = {};

async function makeCerts(): Promise<void> {
  const certs = await makeTestCerts();
  dir = certs.dir;
  Object.assign(pem, certs.pem);
}

const servers: GrpcServer[] = [];
let transport: GrpcTransport;
async function serve(tls: TlsOptions): Promise<string> {
  const state = new HealthState();
  state.setServing(true);
  const server = createGrpcServer({ methods: [healthMethod(state)], maxMessageBytes: 1024, tls, transport });
  servers.push(server);
  return `localhost:${(await server.listen("127.0.0.1", 0)).port}`;
}

beforeAll(makeCerts);
afterAll(async () => {
  for (const s of servers) await s.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (name: string): Buffer => {
  const b = pem[name];
  if (!b) throw new Error(`no ${name}`);
  return b;
};

describe.each(["tollgate", "node"] as const)("grpc server over TLS (%s transport)", (t) => {
  beforeAll(() => {
    transport = t;
  });

  it("serves a client that trusts its CA", async () => {
    const address = await serve({ cert: get("server.crt"), key: get("server.key") });
    const client = createHealthClient(address, { ca: get("ca.crt") });
    expect(await client.check("")).toBe("SERVING");
    client.close();
  });

  it("with a client CA, serves a client presenting a certificate it signed", async () => {
    const address = await serve({ cert: get("server.crt"), key: get("server.key"), clientCa: get("ca.crt") });
    const client = createHealthClient(address, {
      ca: get("ca.crt"),
      cert: get("client.crt"),
      key: get("client.key"),
    });
    expect(await client.check("")).toBe("SERVING");
    client.close();
  });

  it("with a client CA, refuses a client without a certificate", async () => {
    const address = await serve({ cert: get("server.crt"), key: get("server.key"), clientCa: get("ca.crt") });
    const client = createHealthClient(address, { ca: get("ca.crt") });
    const err = await callError(client.check(""));
    expect(err.code).toBe(Status.UNAVAILABLE);
    client.close();
  });

  it("with a client CA, refuses a client whose certificate another CA signed", async () => {
    const address = await serve({ cert: get("server.crt"), key: get("server.key"), clientCa: get("ca.crt") });
    const client = createHealthClient(address, {
      ca: get("ca.crt"),
      cert: get("other-client.crt"),
      key: get("other-client.key"),
    });
    const err = await callError(client.check(""));
    expect(err.code).toBe(Status.UNAVAILABLE);
    client.close();
  });

  it("refuses a plaintext h2c client on the TLS port", async () => {
    const address = await serve({ cert: get("server.crt"), key: get("server.key") });
    const client = createHealthClient(address);
    const err = await callError(client.check(""));
    expect(err.code).toBe(Status.UNAVAILABLE);
    client.close();
  });
});
