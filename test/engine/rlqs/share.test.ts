/**
 * One Envoy's share through a shift (engine/rlqs/share.ts), on an in-process board whose other
 * entries the test writes: who a re-read may raise, how far, and how long a share keeps looking.
 */
import { describe, expect, it } from "vitest";
import type { Participant } from "../../../src/engine/rlqs/allocator.js";
import {
  rebalanceShare,
  reportShare,
  type Share,
  type ShareRequest,
} from "../../../src/engine/rlqs/share.js";
import { rateOf } from "../../../src/engine/rlqs/token-bucket.js";
import { MemoryUsageBoard } from "../../../src/store/rlqs/memory-board.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const KEY = "q";
const STALE = 3000;

function setup(others: readonly Participant[]) {
  const clock = new FakeClock();
  const board = new MemoryUsageBoard({ clock });
  for (const p of others) board.reportNow(KEY, { participant: p.id, demand: p.demand, held: p.held }, STALE);
  const o = { board, localBoard: new MemoryUsageBoard({ clock }), instances: () => 1 };
  const request = (r: Partial<ShareRequest> & Pick<ShareRequest, "demand">): ShareRequest => ({
    domain: "edge",
    key: KEY,
    participant: "self",
    previous: undefined,
    previousDemand: undefined,
    limit: { ratePerSec: 100, burst: 100 },
    minShare: 0.1,
    threshold: 0.1,
    staleMs: STALE,
    policy: () => "local",
    ...r,
  });
  const report = async (r: Partial<ShareRequest> & Pick<ShareRequest, "demand">): Promise<Share> => {
    const out = await reportShare(o, request(r));
    if (out?.share === undefined) throw new Error("no share");
    return out.share;
  };
  const reread = async (share: Share) => {
    const tb = await rebalanceShare(o, share, new Map());
    return tb === undefined ? undefined : rateOf(tb);
  };
  const write = (p: Participant) =>
    board.reportNow(KEY, { participant: p.id, demand: p.demand, held: p.held }, STALE);
  return { report, reread, write };
}

/** Within the token bucket's rounding (1/1000 of the limit). */
const near = (x: number | undefined, y: number) => x !== undefined && Math.abs(x - y) <= 0.1;

describe("a share in a shift", () => {
  it("is raised by a re-read once room appears when its own demand grew, though not capped at its report", async () => {
    // self grew 20 -> 40; a (60) has not reported its drop yet and holds 50, b holds 18.
    const { report, reread, write } = setup([
      { id: "a", demand: 60, held: 50 },
      { id: "b", demand: 20, held: 18 },
    ]);
    const share = await report({ demand: 40, previous: 30, previousDemand: 20 });
    // Target 3.3 + 90 * 40/120 = 33.3, room 32: 32, within the hysteresis of its target (not capped).
    expect(near(share.held, 32)).toBe(true);
    expect(share.capped).toBe(false);
    expect(share.growing).toBe(true);
    expect(share.unsettled).toBe(true);
    // a's drop lands: self's target is 3.3 + 90 * 40/80 = 48.3, and the room is there.
    write({ id: "a", demand: 20, held: 20 });
    expect(near(await reread(share), 48.3)).toBe(true);
  });

  it("keeps looking for one more report after a growth, so the next one still counts as growing", async () => {
    const { report, reread, write } = setup([{ id: "a", demand: 60, held: 50 }]);
    const first = await report({ demand: 40, previous: 30, previousDemand: 10 });
    expect(first.rose).toBe(true);
    // Its next report moved by less than the shift threshold (40 -> 45): still in the shift.
    const second = await report({ demand: 45, previous: first.held, previousDemand: 40, before: first });
    expect(second.rose).toBe(false);
    expect(second.growing).toBe(true);
    expect(second.moving).toBe(true);
    expect(near(second.held, 43.5)).toBe(true); // its target 5 + 90 * 45/105 = 43.57: not capped
    // a's drop lands after the second report: the share is still raised to its target 5 + 90 * 45/55.
    write({ id: "a", demand: 10, held: 10 });
    expect(near(await reread(second), 78.6)).toBe(true);
    const third = await report({ demand: 44, previous: second.held, previousDemand: 45, before: second });
    expect(third.growing).toBe(false);
  });

  it("is raised back by a re-read only up to the highest rate it held since its previous report", async () => {
    // A steady share (demand 40 before and now) holding 40, within the hysteresis of its 39.3.
    const { report, reread, write } = setup([
      { id: "a", demand: 40, held: 37 },
      { id: "c", demand: 20, held: 23 },
    ]);
    const share = await report({ demand: 40, previous: 40, previousDemand: 40 });
    expect(share.held).toBe(40);
    expect(share.ceiling).toBe(40);
    // c's growth is seen first (a's drop not yet): its target falls to 3.3 + 90 * 40/180 = 23.3.
    write({ id: "c", demand: 100, held: 23 });
    expect(near(await reread(share), 23.3)).toBe(true);
    expect(share.moving).toBe(true);
    // a's drop lands: its target is 3.3 + 90 * 40/150 = 27.3; it goes back up (not capped, not growing).
    write({ id: "a", demand: 10, held: 10 });
    expect(near(await reread(share), 27.3)).toBe(true);
    // c gives room back: its target would be 3.3 + 90 * 40/60 = 63.3, but it is held at its ceiling.
    write({ id: "c", demand: 10, held: 10 });
    expect(await reread(share)).toBe(40);
  });

  it("keeps looking after a lowering at its own report, though nobody is short, and is raised back", async () => {
    // A steady share (demand 40) holding 40; c's growth is seen, a's drop not yet: everybody else
    // holds its target, so the view alone would call the bucket settled.
    const { report, reread, write } = setup([
      { id: "a", demand: 40, held: 23.3 },
      { id: "c", demand: 100, held: 53.3 },
    ]);
    const share = await report({ demand: 40, previous: 40, previousDemand: 40 });
    expect(near(share.held, 23.3)).toBe(true); // lowered at its report: 3.3 + 90 * 40/180
    expect(share.moving).toBe(true);
    expect(share.unsettled).toBe(true); // it re-reads until its next report
    write({ id: "a", demand: 10, held: 10 }); // the rest of the shift lands
    expect(near(await reread(share), 27.3)).toBe(true); // 3.3 + 90 * 40/150, under its ceiling of 40
  });

  it("halves the hysteresis while in a shift: a rate set on a half-seen shift is not kept 10 % off", async () => {
    const others = [
      { id: "a", demand: 40, held: 30 },
      { id: "b", demand: 40, held: 30 },
    ];
    // Settled: its target 3.3 + 90 * 45/125 = 35.7 is within 10 % of the 38 it holds: kept.
    const settled = await setup(others).report({ demand: 45, previous: 38, previousDemand: 44 });
    expect(settled.held).toBe(38);
    // The same report after a re-read changed its rate (the shift was still landing): re-sent.
    const { report } = setup(others);
    const before = { shifted: false, rose: false, changed: true };
    const moving = await report({ demand: 45, previous: 38, previousDemand: 44, before });
    expect(near(moving.held, 35.7)).toBe(true);
    expect(moving.moving).toBe(true);
  });
});
