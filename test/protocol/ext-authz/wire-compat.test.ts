import type { DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  AddressSchema,
  PipeSchema,
  SocketAddressSchema,
} from "../../../src/gen/envoy/config/core/v3/address_pb.js";
import {
  HeaderMapSchema,
  HeaderValueOptionSchema,
  MetadataSchema,
  QueryParameterSchema,
} from "../../../src/gen/envoy/config/core/v3/base_pb.js";
import {
  AttributeContext_HttpRequestSchema,
  AttributeContext_PeerSchema,
  AttributeContext_RequestSchema,
  AttributeContextSchema,
} from "../../../src/gen/envoy/service/auth/v3/attribute_context_pb.js";
import {
  CheckRequestSchema,
  CheckResponseSchema,
  DeniedHttpResponseSchema,
  OkHttpResponseSchema,
} from "../../../src/gen/envoy/service/auth/v3/external_auth_pb.js";
import { HttpStatusSchema } from "../../../src/gen/envoy/type/v3/http_status_pb.js";
import { StatusSchema } from "../../../src/gen/google/rpc/status_pb.js";
import { officialRegistry, fieldShape as shape } from "../../helpers/wire-compat.js";

const official = officialRegistry();

const MESSAGES: DescMessage[] = [
  CheckRequestSchema,
  CheckResponseSchema,
  DeniedHttpResponseSchema,
  OkHttpResponseSchema,
  AttributeContextSchema,
  AttributeContext_PeerSchema,
  AttributeContext_RequestSchema,
  AttributeContext_HttpRequestSchema,
  AddressSchema,
  SocketAddressSchema,
  PipeSchema,
  HeaderValueOptionSchema,
  HeaderMapSchema,
  MetadataSchema,
  QueryParameterSchema,
  HttpStatusSchema,
  StatusSchema,
];

describe("tollgate's ext_authz protos", () => {
  it.each(
    MESSAGES.map((m) => [m.typeName, m] as const),
  )("%s has the official fields, numbers and types", (typeName, mine) => {
    const theirs = official().getMessage(typeName);
    if (theirs === undefined) throw new Error(`${typeName} missing from the official registry`);
    const ours = new Set(shape(mine));
    // Every field we declare matches the official one exactly (we may omit fields we never use).
    expect(shape(theirs).filter((f) => ours.has(f))).toEqual(shape(mine));
  });

  it("declares the Check method at the official path", () => {
    const service = official().getService("envoy.service.auth.v3.Authorization");
    expect(service?.methods.map((m) => `/${service.typeName}/${m.name}`)).toEqual([
      "/envoy.service.auth.v3.Authorization/Check",
    ]);
  });

  it("uses the official numbers for the HTTP status codes it sends", () => {
    const codes = official().getEnum("envoy.type.v3.StatusCode");
    const mine = HttpStatusSchema.fields[0]?.enum;
    for (const v of mine?.values ?? [])
      expect(codes?.values.find((o) => o.name === v.name)?.number).toBe(v.number);
  });
});
