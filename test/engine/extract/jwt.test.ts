import { describe, expect, it } from "vitest";
import { decodeBearerPayload, jwtClaim } from "../../../src/engine/extract/jwt.js";
import type { JwtClaimSource } from "../../../src/engine/extract/rules.js";
import { attrs, fakeJwt } from "../../helpers/ext-authz-attrs.js";

const claim = (over: Partial<JwtClaimSource> = {}): JwtClaimSource => ({
  kind: "jwt_claim",
  claim: "tenant",
  claimPath: ["tenant"],
  claimHeader: undefined,
  payloadMetadataKey: undefined,
  metadataNamespace: "envoy.filters.http.jwt_authn",
  tokenHeader: "authorization",
  decodeToken: true,
  ...over,
});

describe("decodeBearerPayload", () => {
  it("decodes the base64url payload of a Bearer token without verifying it", () => {
    expect(decodeBearerPayload(`Bearer ${fakeJwt({ sub: "u1" })}`)).toEqual({ sub: "u1" });
    expect(decodeBearerPayload(`bearer   ${fakeJwt({ sub: "u1" })}`)).toEqual({ sub: "u1" });
  });
  it("rejects other schemes, malformed tokens and non-object payloads", () => {
    expect(decodeBearerPayload(`Basic ${fakeJwt({ sub: "u1" })}`)).toBeUndefined();
    expect(decodeBearerPayload("Bearer abc")).toBeUndefined();
    expect(decodeBearerPayload("Bearer a.bm90IGpzb24.c")).toBeUndefined();
    const arr = Buffer.from("[1]").toString("base64url");
    expect(decodeBearerPayload(`Bearer e30.${arr}.c`)).toBeUndefined();
  });
});

describe("jwtClaim", () => {
  const token = {
    authorization: `Bearer ${fakeJwt({ tenant: "from-token", org: { id: 42 }, admin: true })}`,
  };

  it("reads a claim from the bearer token", () => {
    expect(jwtClaim(claim(), attrs({ headers: token }))).toBe("from-token");
  });
  it("follows a dotted claim path and renders numbers and booleans as text", () => {
    expect(jwtClaim(claim({ claim: "org.id", claimPath: ["org", "id"] }), attrs({ headers: token }))).toBe(
      "42",
    );
    expect(jwtClaim(claim({ claim: "admin", claimPath: ["admin"] }), attrs({ headers: token }))).toBe("true");
  });
  it("gives nothing for an object claim or an absent token", () => {
    expect(jwtClaim(claim({ claim: "org", claimPath: ["org"] }), attrs({ headers: token }))).toBeUndefined();
    expect(jwtClaim(claim(), attrs())).toBeUndefined();
  });
  it("prefers the header jwt_authn wrote over the payload metadata and the token", () => {
    const source = claim({ claimHeader: "x-jwt-tenant", payloadMetadataKey: "jwt_payload" });
    const a = attrs({
      headers: { ...token, "x-jwt-tenant": "from-header" },
      metadata: { "envoy.filters.http.jwt_authn": { jwt_payload: { tenant: "from-metadata" } } },
    });
    expect(jwtClaim(source, a)).toBe("from-header");
  });
  it("prefers the verified payload metadata over decoding the token", () => {
    const source = claim({ payloadMetadataKey: "jwt_payload" });
    const a = attrs({
      headers: token,
      metadata: { "envoy.filters.http.jwt_authn": { jwt_payload: { tenant: "from-metadata" } } },
    });
    expect(jwtClaim(source, a)).toBe("from-metadata");
  });
  it("never decodes the token when decode_token is off", () => {
    expect(jwtClaim(claim({ decodeToken: false }), attrs({ headers: token }))).toBeUndefined();
  });
  it("reads the token from a configured header", () => {
    const a = attrs({ headers: { "x-token": token.authorization } });
    expect(jwtClaim(claim({ tokenHeader: "x-token" }), a)).toBe("from-token");
  });
});
