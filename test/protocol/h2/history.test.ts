/** The closed-stream record (RFC 9113 §5.1) of the own HTTP/2 transport, without a socket. */
import { describe, expect, it } from "vitest";
import { DATA, HEADERS } from "../../../src/protocol/h2/frames.js";
import { closedStreamAction, type StreamFate, StreamHistory } from "../../../src/protocol/h2/history.js";

describe("StreamHistory", () => {
  it("remembers how each stream closed", () => {
    const h = new StreamHistory(8);
    for (const id of [1, 3, 5, 7, 9]) h.opened(id);
    h.closed(1, "ended");
    h.closed(3, "reset-sent");
    h.closed(5, "reset-received");
    expect([1, 3, 5, 7, 9].map((id) => h.fate(id))).toEqual([
      "ended",
      "reset-sent",
      "reset-received",
      "open",
      "open",
    ]);
    h.closed(9, "reset-sent");
    h.closed(9, "ended"); // a later close of the same stream overrides (the connection never does twice)
    expect(h.fate(9)).toBe("ended");
  });

  it("tells a skipped id (never opened) from one closed too long ago (forgotten)", () => {
    const h = new StreamHistory(4); // slots for ids 1,3,5,7 then 9 reuses 1's
    h.opened(1);
    h.closed(1, "reset-sent");
    h.opened(7);
    expect(h.fate(3)).toBe("never-opened"); // empty slot
    expect(h.fate(5)).toBe("never-opened");
    h.opened(9);
    h.closed(9, "ended");
    expect(h.fate(1)).toBe("forgotten"); // its slot went to 9
    expect(h.fate(9)).toBe("ended");
    h.opened(13);
    expect(h.fate(5)).toBe("forgotten"); // slot of 5 now holds 13 > 5
  });

  it("knows an id skipped below a later stream as never opened, while its slot holds an older id", () => {
    const h = new StreamHistory(8); // slot = (id >>> 1) & 7
    h.opened(3); // slot 1
    h.opened(21); // slot 2; skips 5 … 19
    expect(h.fate(19)).toBe("never-opened"); // slot 1 holds 3 < 19
    expect(h.fate(7)).toBe("never-opened"); // slot 3 empty
    // The limit: 5 shares slot 2 with 21, so the record cannot tell it was skipped; it errs on the
    // side of leniency (forgotten frames are ignored, never a connection error).
    expect(h.fate(5)).toBe("forgotten");
  });

  it("does not let a late close of an evicted stream overwrite the newer stream in its slot", () => {
    const h = new StreamHistory(2); // ids 1 and 5 share slot 0
    h.opened(1);
    h.opened(5);
    h.closed(1, "reset-received");
    expect(h.fate(5)).toBe("open");
    expect(h.fate(1)).toBe("forgotten");
  });

  it("holds exactly `size` consecutive streams", () => {
    const h = new StreamHistory(1024);
    for (let id = 1; id <= 4095; id += 2) {
      h.opened(id);
      h.closed(id, "ended");
    }
    expect(h.fate(4095 - 2 * 1023)).toBe("ended"); // the oldest of the last 1024
    expect(h.fate(4095 - 2 * 1024)).toBe("forgotten");
  });

  it.each([0, 1, 3, 1000, -4, 2.5])("refuses a size of %s (a power of two ≥ 2)", (size) => {
    expect(() => new StreamHistory(size)).toThrow(RangeError);
  });
});

describe("closedStreamAction (RFC 9113 §5.1)", () => {
  const table: [StreamFate, string, string][] = [
    ["reset-sent", "ignore", "ignore"],
    ["forgotten", "ignore", "ignore"],
    ["open", "ignore", "ignore"],
    ["reset-received", "reset-stream-closed", "reset-stream-closed"],
    ["ended", "connection-stream-closed", "connection-stream-closed"],
    ["never-opened", "connection-stream-closed", "connection-protocol-error"],
  ];
  it.each(table)("%s: DATA → %s, HEADERS → %s", (fate, data, headers) => {
    expect(closedStreamAction(DATA, fate)).toBe(data);
    expect(closedStreamAction(HEADERS, fate)).toBe(headers);
  });
});
