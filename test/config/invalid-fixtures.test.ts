import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { ConfigError, formatProblem } from "../../src/config/errors.js";

const DIR = join(import.meta.dirname, "../fixtures/config/invalid");

/** Every fixture with the exact problems it must produce (file name as the reported file). */
const EXPECTED: ReadonlyArray<readonly [string, readonly string[]]> = [
  [
    "bool-wrong-type.yaml",
    [
      'bool-wrong-type.yaml:4:18: descriptors[0].shadow_mode: must be true or false, got "yes" (a quoted string)',
    ],
  ],
  [
    "calendar-bad-time-zone.yaml",
    [
      'calendar-bad-time-zone.yaml:5:16: descriptors[0].time_zone: unknown time zone "Europe/Berlinn" (use an IANA name such as UTC or Europe/Berlin)',
    ],
  ],
  [
    "calendar-gcra.yaml",
    [
      "calendar-gcra.yaml:4:15: descriptors[0].calendar: requires algorithm fixed_window and unit day, week, month or year (got gcra per hour)",
    ],
  ],
  [
    "calendar-with-lease.yaml",
    ["calendar-with-lease.yaml:4:15: descriptors[0].calendar: cannot be used together with lease"],
  ],
  [
    "burst-with-fixed-window.yaml",
    [
      "burst-with-fixed-window.yaml:4:63: descriptors[0].rate_limit.burst: is not allowed with algorithm fixed_window (a window admits requests_per_unit)",
    ],
  ],
  [
    "burst-zero.yaml",
    ["burst-zero.yaml:4:63: descriptors[0].rate_limit.burst: must be an integer from 1 to 4294967295, got 0"],
  ],
  ["descriptors-not-list.yaml", ["descriptors-not-list.yaml:3:3: descriptors: must be a list, got a map"]],
  [
    "duplicate-key.yaml",
    [
      'duplicate-key.yaml:8:14: descriptors[0].descriptors[1].key: duplicate descriptor composite key "d.tenant.route_read" (first defined at line 5)',
    ],
  ],
  ["duplicate-yaml-key.yaml", ["duplicate-yaml-key.yaml:2:1: Map keys must be unique"]],
  ["empty-domain.yaml", ["empty-domain.yaml:1:9: domain: must not be empty"]],
  ["empty-file.yaml", ["empty-file.yaml: file is empty (expected domain and descriptors)"]],
  ["empty-key.yaml", ["empty-key.yaml:3:10: descriptors[0].key: descriptor has empty key"]],
  [
    "empty-replaces-name.yaml",
    ["empty-replaces-name.yaml:9:17: descriptors[0].rate_limit.replaces[0].name: should not be empty"],
  ],
  [
    "invalid-algorithm.yaml",
    [
      'invalid-algorithm.yaml:4:67: descriptors[0].rate_limit.algorithm: unknown algorithm "token_bucket" (use gcra or fixed_window)',
    ],
  ],
  [
    "invalid-on-store-error.yaml",
    [
      'invalid-on-store-error.yaml:2:17: on_store_error: unknown on_store_error "open" (use local, allow, deny or error)',
    ],
  ],
  [
    "invalid-unit.yaml",
    [
      'invalid-unit.yaml:5:13: descriptors[0].rate_limit.unit: unknown unit "minutes" (use second, minute, hour, day, week, month or year)',
    ],
  ],
  [
    "lease-bad-ttl.yaml",
    [
      'lease-bad-ttl.yaml:4:29: descriptors[0].lease.ttl: must be a duration such as "250ms", "5s" or "1m", got 5',
    ],
  ],
  [
    "list-item-not-map.yaml",
    ["list-item-not-map.yaml:5:5: descriptors[1]: list item must be a map, got just a string"],
  ],
  [
    "metadata-not-map.yaml",
    ["metadata-not-map.yaml:4:15: descriptors[0].metadata: must be a map, got a list"],
  ],
  ["missing-domain.yaml", ['missing-domain.yaml:1:1: missing required key "domain"']],
  ["missing-key.yaml", ['missing-key.yaml:3:5: descriptors[0]: missing required key "key"']],
  [
    "missing-rpu.yaml",
    [
      'missing-rpu.yaml:4:17: descriptors[0].rate_limit: missing required key "requests_per_unit" (or set unlimited: true)',
    ],
  ],
  [
    "missing-unit.yaml",
    [
      'missing-unit.yaml:5:7: descriptors[0].rate_limit: missing required key "unit" (or set unlimited: true)',
    ],
  ],
  [
    "rate-limit-and-rate-limits.yaml",
    [
      'rate-limit-and-rate-limits.yaml:6:7: descriptors[0].rate_limits: cannot be used together with "rate_limit" (put every limit in rate_limits)',
    ],
  ],
  [
    "rate-limits-empty.yaml",
    ["rate-limits-empty.yaml:4:18: descriptors[0].rate_limits: must contain at least one limit"],
  ],
  [
    "replaces-self.yaml",
    [
      'replaces-self.yaml:9:17: descriptors[0].rate_limit.replaces[0].name: should not name its own rate limit "a"',
    ],
  ],
  [
    "rpu-float.yaml",
    [
      "rpu-float.yaml:4:52: descriptors[0].rate_limit.requests_per_unit: must be an integer from 0 to 4294967295, got 2.5",
    ],
  ],
  [
    "rpu-negative.yaml",
    [
      "rpu-negative.yaml:4:52: descriptors[0].rate_limit.requests_per_unit: must be an integer from 0 to 4294967295, got -1",
    ],
  ],
  [
    "rpu-overflow.yaml",
    [
      "rpu-overflow.yaml:4:52: descriptors[0].rate_limit.requests_per_unit: must be an integer from 0 to 4294967295, got 4294967296",
    ],
  ],
  [
    "rpu-quoted.yaml",
    [
      'rpu-quoted.yaml:4:52: descriptors[0].rate_limit.requests_per_unit: must be an integer from 0 to 4294967295, got "10" (a quoted string)',
    ],
  ],
  [
    "shards-out-of-range.yaml",
    ["shards-out-of-range.yaml:4:13: descriptors[0].shards: must be an integer from 1 to 64, got 65"],
  ],
  [
    "shards-without-rule.yaml",
    [
      'shards-without-rule.yaml:4:13: descriptors[0].shards: requires "rate_limit" or "rate_limits" on the same descriptor',
    ],
  ],
  [
    "share-threshold-without-wildcard.yaml",
    [
      'share-threshold-without-wildcard.yaml:5:22: descriptors[0].share_threshold: requires a value containing "*" (a wildcard value)',
    ],
  ],
  [
    "time-zone-without-calendar.yaml",
    [
      "time-zone-without-calendar.yaml:4:16: descriptors[0].time_zone: requires calendar: true on the same descriptor",
    ],
  ],
  [
    "unit-with-unlimited.yaml",
    [
      "unit-with-unlimited.yaml:6:13: descriptors[0].rate_limit.unit: should not be set when unlimited is true",
    ],
  ],
  [
    "unknown-key-typo.yaml",
    [
      'unknown-key-typo.yaml:5:7: descriptors[0].rate_limit: missing required key "requests_per_unit" (or set unlimited: true)',
      'unknown-key-typo.yaml:6:7: descriptors[0].rate_limit.request_per_unit: unknown key "request_per_unit" (did you mean "requests_per_unit"?)',
    ],
  ],
  [
    "unknown-key.yaml",
    [
      'unknown-key.yaml:4:5: descriptors[0].rate_limits_per_unit: unknown key "rate_limits_per_unit" (allowed here: descriptors, on_store_error, key, value, rate_limit, rate_limits, shadow_mode, overdraft, max_debt, quota_mode, detailed_metric, value_to_metric, share_threshold, metadata, shards, lease, calendar, time_zone)',
    ],
  ],
  [
    "unlimited-in-rate-limits.yaml",
    [
      'unlimited-in-rate-limits.yaml:5:9: descriptors[0].rate_limits[0]: missing required key "unit"',
      'unlimited-in-rate-limits.yaml:5:9: descriptors[0].rate_limits[0]: missing required key "requests_per_unit"',
      'unlimited-in-rate-limits.yaml:5:11: descriptors[0].rate_limits[0].unlimited: unknown key "unlimited" (allowed here: unit, requests_per_unit, name, algorithm, burst)',
    ],
  ],
  [
    "value-float.yaml",
    [
      'value-float.yaml:4:12: descriptors[0].value: must be a string, got the float 1.50: quote it (value: "1.50"); unquoted floats are rejected, as by envoyproxy/ratelimit, because 1.50 would read as 1.5',
    ],
  ],
  [
    "max-debt-without-overdraft.yaml",
    ['max-debt-without-overdraft.yaml:5:15: descriptors[0].max_debt: requires "overdraft: true"'],
  ],
  [
    "overdraft-with-shards.yaml",
    [
      'overdraft-with-shards.yaml:5:16: descriptors[0].overdraft: cannot be used with "shards" (a debt belongs to one bucket)',
    ],
  ],
  [
    "max-debt-over-a-year.yaml",
    [
      "max-debt-over-a-year.yaml:8:15: descriptors[0].max_debt: 2000000 hits take more than 366 days to repay at 100000 per month (at most 1220000)",
    ],
  ],
  [
    "overdraft-without-rule.yaml",
    [
      'overdraft-without-rule.yaml:4:16: descriptors[0].overdraft: requires "rate_limit" or "rate_limits" on the same descriptor',
    ],
  ],
  [
    "max-debt-too-large.yaml",
    [
      "max-debt-too-large.yaml:6:15: descriptors[0].max_debt: must be an integer from 0 to 1000000000, got 1000000001",
    ],
  ],
  [
    "yaml-syntax.yaml",
    ["yaml-syntax.yaml:5:1: Flow map in block collection must be sufficiently indented and end with a }"],
  ],
];

function problemsOf(file: string): string[] {
  try {
    parseConfigText(file, readFileSync(join(DIR, file), "utf8"));
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  return [];
}

describe("invalid config fixtures", () => {
  it.each(EXPECTED)("%s is rejected with its exact message", (file, messages) => {
    expect(problemsOf(file)).toEqual(messages);
  });

  it("has an expectation for every fixture file", () => {
    const listed = new Set(EXPECTED.map(([f]) => f));
    expect(readdirSync(DIR).filter((f) => !listed.has(f))).toEqual([]);
  });
});
