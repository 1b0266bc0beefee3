import { describe, expect, it } from "vitest";
import { type CpuProfile, summarise } from "../../bench/profile-top.mjs";

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(idle)", "") },
    { id: 2, callFrame: frame("planOne", "file:///repo/dist/engine/plan.js", 41) },
    {
      id: 3,
      callFrame: frame("readMessage", "file:///repo/node_modules/@bufbuild/protobuf/dist/esm/from-binary.js"),
    },
    { id: 4, callFrame: frame("(garbage collector)", "") },
  ],
  samples: [1, 2, 2, 3, 4, 1],
  timeDeltas: [500, 100, 200, 50, 150, 500],
};

describe("cpu profile summary", () => {
  it("adds self time per area and leaves idle time out of the busy total", () => {
    const s = summarise(profile);
    expect(s.busyUs).toBe(500);
    expect(s.areas).toEqual([
      ["tollgate engine/ (match, keys, decide, headers)", 300],
      ["gc", 150],
      ["protobuf-es decode/encode", 50],
    ]);
  });

  it("ranks functions by self time with their file and 1-based line", () => {
    const [first] = summarise(profile).functions;
    expect(first).toEqual([
      "planOne engine/plan.js:42",
      "tollgate engine/ (match, keys, decide, headers)",
      300,
    ]);
  });
});
