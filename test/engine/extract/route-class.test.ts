import { describe, expect, it } from "vitest";
import {
  compilePathGlob,
  type RouteClassTable,
  routeClass,
} from "../../../src/engine/extract/route-class.js";

const table: RouteClassTable = {
  rows: [
    {
      methods: new Set(["GET"]),
      prefix: undefined,
      glob: compilePathGlob("/v1/*/export/**"),
      className: "export",
    },
    { methods: new Set(["GET", "HEAD"]), prefix: "/v1/", glob: undefined, className: "read" },
    { methods: new Set(), prefix: "/v1/", glob: undefined, className: "write" },
  ],
  defaultClass: "other",
};

describe("compilePathGlob", () => {
  it("lets * match inside one segment only", () => {
    const g = compilePathGlob("/v1/*/orders");
    expect(g.test("/v1/acme/orders")).toBe(true);
    expect(g.test("/v1/a/b/orders")).toBe(false);
  });
  it("lets ** match across segments", () => {
    expect(compilePathGlob("/files/**").test("/files/a/b/c.txt")).toBe(true);
  });
  it("treats regex characters literally and anchors the whole path", () => {
    const g = compilePathGlob("/a.b(c)");
    expect(g.test("/a.b(c)")).toBe(true);
    expect(g.test("/aXb(c)")).toBe(false);
    expect(g.test("/a.b(c)/more")).toBe(false);
  });
});

describe("routeClass", () => {
  it("returns the first row whose method and path match", () => {
    expect(routeClass(table, "GET", "/v1/acme/export/2024/q1.csv")).toBe("export");
    expect(routeClass(table, "GET", "/v1/orders")).toBe("read");
    expect(routeClass(table, "HEAD", "/v1/orders")).toBe("read");
  });
  it("matches an empty method set against any method", () => {
    expect(routeClass(table, "POST", "/v1/acme/export/x")).toBe("write");
  });
  it("compares methods case-insensitively", () => {
    expect(routeClass(table, "get", "/v1/orders")).toBe("read");
  });
  it("falls back to the default class", () => {
    expect(routeClass(table, "GET", "/healthz")).toBe("other");
  });
  it("gives nothing without a default when no row matches", () => {
    expect(routeClass({ ...table, defaultClass: undefined }, "GET", "/healthz")).toBeUndefined();
  });
});
