import { describe, expect, it } from "vitest";
import { canonicalIp, maskedSubnet } from "../../../src/engine/extract/ip.js";

const defaults = { ipv4Prefix: 24, ipv6Prefix: 56 };

describe("canonicalIp", () => {
  it("keeps an IPv4 address as it is", () => {
    expect(canonicalIp("203.0.113.7")).toBe("203.0.113.7");
  });
  it("writes IPv6 in RFC 5952 form so that spellings of one address share a bucket", () => {
    expect(canonicalIp("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::1");
    expect(canonicalIp("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(canonicalIp("::")).toBe("::");
  });
  it("treats an IPv4-mapped IPv6 address as IPv4", () => {
    expect(canonicalIp("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(canonicalIp("::ffff:cb00:7107")).toBe("203.0.113.7");
  });
  it("drops a zone index and brackets", () => {
    expect(canonicalIp("fe80::1%eth0")).toBe("fe80::1");
    expect(canonicalIp("[2001:db8::1]")).toBe("2001:db8::1");
  });
  it("rejects text that is not an IP literal", () => {
    expect(canonicalIp("example.com")).toBeUndefined();
    expect(canonicalIp("256.1.1.1")).toBeUndefined();
    expect(canonicalIp("")).toBeUndefined();
  });
});

describe("maskedSubnet", () => {
  it("masks IPv4 to /24 by default", () => {
    expect(maskedSubnet("203.0.113.7", defaults)).toBe("203.0.113.0/24");
  });
  it("masks IPv6 to /56 by default", () => {
    expect(maskedSubnet("2001:db8:1234:56ff:1::1", defaults)).toBe("2001:db8:1234:5600::/56");
  });
  it("honours configured prefixes that do not fall on a byte boundary", () => {
    expect(maskedSubnet("203.0.113.200", { ipv4Prefix: 26, ipv6Prefix: 56 })).toBe("203.0.113.192/26");
    expect(maskedSubnet("10.1.2.3", { ipv4Prefix: 0, ipv6Prefix: 56 })).toBe("0.0.0.0/0");
    expect(maskedSubnet("10.1.2.3", { ipv4Prefix: 32, ipv6Prefix: 56 })).toBe("10.1.2.3/32");
  });
  it("masks an IPv4-mapped address with the IPv4 prefix", () => {
    expect(maskedSubnet("::ffff:198.51.100.9", defaults)).toBe("198.51.100.0/24");
  });
  it("gives nothing for a non-IP", () => {
    expect(maskedSubnet("unix:/tmp/sock", defaults)).toBeUndefined();
  });
});
