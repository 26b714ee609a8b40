import { describe, expect, it } from "vitest";
import { frozenClock, systemClock } from "./clock.ts";
import { InvalidClockError } from "./errors.ts";
import { canonicalize } from "./canonical.ts";
import { hashHex } from "./hash.ts";
import { CORRELATION_ID_LENGTH, correlationId } from "./ids.ts";

describe("clocks", () => {
  it("frozenClock stands still until advanced or set", () => {
    const c = frozenClock(100);
    expect(c.now()).toBe(100);
    expect(c.advance(50)).toBe(150);
    expect(c.now()).toBe(150);
    expect(c.set(10)).toBe(10);
    expect(() => c.advance(-1)).toThrow(InvalidClockError);
    expect(() => frozenClock(Number.NaN)).toThrow(/finite/);
  });

  it("systemClock reads real time", () => {
    const before = Date.now();
    const t = systemClock().now();
    expect(t).toBeGreaterThanOrEqual(before);
  });
});

describe("correlationId", () => {
  it("is a deterministic 24-hex id that changes with every part", () => {
    const id = correlationId("crew-1", 1, "merc#0", 1);
    expect(id).toMatch(new RegExp(`^[0-9a-f]{${CORRELATION_ID_LENGTH}}$`));
    expect(correlationId("crew-1", 1, "merc#0", 1)).toBe(id);
    const variants = [
      correlationId("crew-2", 1, "merc#0", 1),
      correlationId("crew-1", 2, "merc#0", 1),
      correlationId("crew-1", 1, "merc#1", 1),
      correlationId("crew-1", 1, "merc#0", 2),
    ];
    expect(new Set([id, ...variants]).size).toBe(5);
  });

  it.each([
    ["crew-1", 0, "caller#0", 1],
    ['crew "quoted" \\ ünïcødé/team#1', 12, "fixer#0@merc#3", 2],
  ])(
    "is the first 24 hex chars of SHA-256 over the canonical JSON of [%j, %i, %j, %i]",
    (crewId, phase, agentId, attempt) => {
      expect(correlationId(crewId, phase, agentId, attempt)).toBe(
        hashHex(canonicalize([crewId, phase, agentId, attempt])).slice(0, CORRELATION_ID_LENGTH),
      );
    },
  );

  it("tells apart parts that run together into the same text (its memo never mixes them up)", () => {
    type Parts = [crewId: string, phaseIndex: number, agentId: string, attempt: number];
    const pairs: [Parts, Parts][] = [
      [
        ["ab", 1, "c#0", 1],
        ["a", 1, "bc#0", 1],
      ],
      [
        ["c|1", 1, "x#0", 1],
        ["c", 1, "1|x#0", 1],
      ],
      [
        ["2:a", 1, "b#0", 1],
        ["2", 1, ":ab#0", 1],
      ],
    ];
    for (const [x, y] of pairs) {
      const ix = correlationId(...x);
      const iy = correlationId(...y);
      expect(ix).not.toBe(iy);
      expect([ix, iy]).toEqual([x, y].map((parts) => hashHex(canonicalize(parts)).slice(0, CORRELATION_ID_LENGTH)));
    }
  });

  it("refuses a non-finite phase index or attempt", () => {
    expect(() => correlationId("crew-1", Number.NaN, "merc#0", 1)).toThrow(TypeError);
    expect(() => correlationId("crew-1", 0, "merc#0", Number.POSITIVE_INFINITY)).toThrow(/finite/);
  });
});
