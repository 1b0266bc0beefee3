/**
 * The reference behaviour cases: request sequences covering envoyproxy/ratelimit's behaviours (one
 * limit and its exhaustion, several descriptors in one request, nested and default entries, globs
 * with and without share_threshold, unlimited and whitelisted values, requests_per_unit 0, replaces,
 * shadow and quota modes, hits_addend, request-supplied limits, every unit) plus tollgate's own
 * (burst, fixed windows next to GCRA, rate_limits). Each case is its own domain. Limits are per hour
 * or longer so that the milliseconds between requests never change a whole token, and a request's
 * descriptors name buckets that land on different Redis Cluster masters.
 *
 * A request is `descriptor; descriptor` with each descriptor `k=v,k2=v2`, optionally followed by
 * `*N` (per-descriptor hits_addend) or `@N/unit` (request-supplied limit); `xN` after the whole
 * request repeats it, `+N` sets the request's hits_addend.
 */

/** One case: its rules (without `domain:`) and its requests. */
export interface ReferenceCase {
  readonly name: string;
  readonly rules: string;
  readonly requests: readonly string[];
}

const r = (name: string, rules: string, ...requests: string[]): ReferenceCase => ({ name, rules, requests });

export const REFERENCE_CASES: readonly ReferenceCase[] = [
  r(
    "one GCRA limit is used up and then denied",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }",
    "a=1 x4",
  ),
  r(
    "one fixed-window limit is used up and then denied",
    "- key: a\n  rate_limit: { unit: day, requests_per_unit: 3, algorithm: fixed_window }",
    "a=1 x4",
  ),
  r(
    "hits_addend charges several at once",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 5 }",
    "a=1 +2 x3",
    "a=1",
  ),
  r(
    "a request larger than the limit is denied and consumes nothing",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 5 }",
    "a=1 +10",
    "a=1",
  ),
  r(
    "two descriptors: the second one's denial leaves the first uncharged [A 5/h, B 1/h]",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 5 }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "a=2; b=2 x3",
  ),
  r(
    "three descriptors with the middle one denied",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 1 }\n- key: c\n  rate_limit: { unit: hour, requests_per_unit: 3 }",
    "a=1; b=1; c=1 x3",
  ),
  r(
    "the first descriptor denied, the others untouched",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 1 }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 3 }\n- key: c\n  rate_limit: { unit: hour, requests_per_unit: 3, algorithm: fixed_window }",
    "a=1",
    "a=1; b=1; c=1 x2",
    "b=1; c=1",
  ),
  r(
    "the same descriptor twice in one request charges its bucket twice",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }",
    "a=1; a=1 x3",
  ),
  r(
    "GCRA and fixed-window descriptors in one request",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }\n- key: b\n  rate_limit: { unit: day, requests_per_unit: 1, algorithm: fixed_window }",
    "a=1; b=1 x3",
  ),
  r(
    "rate_limits: every limit of a rule must pass",
    "- key: a\n  rate_limits:\n    - { unit: hour, requests_per_unit: 10 }\n    - { unit: day, requests_per_unit: 2, algorithm: fixed_window }",
    "a=1 x3",
  ),
  r(
    "nested descriptors",
    "- key: tenant\n  descriptors:\n    - key: route\n      value: read\n      rate_limit: { unit: hour, requests_per_unit: 2 }",
    "tenant=t1,route=read x3",
    "tenant=t2,route=read",
  ),
  r(
    "an exact value wins over the default of its key",
    "- key: tenant\n  rate_limit: { unit: hour, requests_per_unit: 5 }\n- key: tenant\n  value: vip\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "tenant=vip x2",
    "tenant=other x2",
  ),
  r(
    "a glob gives each value its own bucket",
    '- key: path\n  value: "/api/*"\n  rate_limit: { unit: hour, requests_per_unit: 2 }',
    "path=/api/a x2",
    "path=/api/b",
    "path=/api/a",
  ),
  r(
    "a glob with share_threshold shares one bucket",
    '- key: path\n  value: "/api/*"\n  share_threshold: true\n  rate_limit: { unit: hour, requests_per_unit: 2 }',
    "path=/api/a",
    "path=/api/b",
    "path=/api/c",
  ),
  r("unlimited is never limited", "- key: a\n  rate_limit: { unlimited: true }", "a=1 x3"),
  r(
    "a whitelisted value next to a limited one",
    "- key: a\n  value: internal\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "a=internal; b=1 x2",
  ),
  r(
    "a descriptor no rule matches, and one longer than the tree",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "z=1; a=1",
    "a=1,extra=1; a=1",
  ),
  r(
    "requests_per_unit 0 blocks, and the other descriptors are not charged",
    "- key: blocked\n  rate_limit: { unit: hour, requests_per_unit: 0 }\n- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }",
    "blocked=1; a=1 x2",
    "a=1",
  ),
  r(
    "replaces drops the named limit",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 1, name: base }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 3, replaces: [{ name: base }] }",
    "a=1; b=1 x3",
    "a=1 x2",
  ),
  r(
    "a shadow-mode rule reports but never denies",
    "- key: a\n  shadow_mode: true\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "a=1 x3",
  ),
  r(
    "a shadow-mode rule next to an enforced one",
    "- key: s\n  shadow_mode: true\n  rate_limit: { unit: hour, requests_per_unit: 1 }\n- key: n\n  rate_limit: { unit: hour, requests_per_unit: 2 }",
    "s=1; n=1 x3",
  ),
  r(
    "quota mode: denied only when every quota descriptor is over",
    "- key: q1\n  quota_mode: true\n  rate_limit: { unit: hour, requests_per_unit: 1 }\n- key: q2\n  quota_mode: true\n  rate_limit: { unit: hour, requests_per_unit: 2 }",
    "q1=1; q2=1 x3",
  ),
  r(
    "a per-descriptor hits_addend 0 checks without consuming",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 2 }",
    "a=1*0 x2",
    "a=1 x3",
    "a=1*0",
  ),
  r(
    "per-descriptor hits_addend across descriptors",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 3 }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 3 }",
    "a=1*2; b=1*1 x2",
    "b=1",
  ),
  r(
    "a request-supplied limit with no rule",
    "- key: other\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "a=1@2/hour x3",
  ),
  r(
    "a request-supplied limit overrides the rule",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 100 }",
    "a=1@1/day x2",
    "a=2 x2",
  ),
  r(
    "denied requests consume nothing",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 2 }\n- key: b\n  rate_limit: { unit: hour, requests_per_unit: 5 }",
    "a=1 x2",
    "a=1; b=1 x3",
    "b=1",
  ),
  r(
    "a GCRA burst larger than the rate",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 2, burst: 4 }",
    "a=1 x5",
  ),
  r(
    "an intermediate entry with its own limit",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 2 }\n  descriptors:\n    - key: b\n      rate_limit: { unit: hour, requests_per_unit: 1 }",
    "a=1 x2",
    "a=1,b=1 x2",
    "a=1",
  ),
  r(
    "a fixed window refuses a charge larger than what is left",
    "- key: a\n  rate_limit: { unit: day, requests_per_unit: 5, algorithm: fixed_window }",
    "a=1 +3",
    "a=1 +3",
    "a=1 +2",
  ),
  r(
    "week, month and year units",
    "- key: w\n  rate_limit: { unit: week, requests_per_unit: 2, algorithm: fixed_window }\n- key: m\n  rate_limit: { unit: month, requests_per_unit: 2 }\n- key: y\n  rate_limit: { unit: year, requests_per_unit: 1 }",
    "w=1; m=1 x3",
    "y=1 x2",
  ),
  r(
    "several tenants keep apart buckets on different masters",
    "- key: tenant\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "tenant=t1; tenant=t2; tenant=t3",
    "tenant=t1",
    "tenant=t2; tenant=t4",
  ),
  r(
    "a glob value next to a default of another key, over and under",
    '- key: user\n  value: "bot-*"\n  rate_limit: { unit: hour, requests_per_unit: 1 }\n- key: ip\n  rate_limit: { unit: hour, requests_per_unit: 3 }',
    "user=bot-1; ip=10.0.0.1 x2",
    "ip=10.0.0.1",
  ),
  r(
    "an unknown domain is OK with no limit",
    "- key: a\n  rate_limit: { unit: hour, requests_per_unit: 1 }",
    "@unknown a=1 x2",
  ),
];
