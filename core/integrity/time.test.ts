import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatDuration, parseIsoMs } from "./time.ts";

describe("parseIsoMs", () => {
  it.each([
    ["2026-01-01", Date.UTC(2026, 0, 1)],
    ["2026-01-01T10:00:00Z", Date.UTC(2026, 0, 1, 10)],
    ["2026-01-01T10:00:00", Date.UTC(2026, 0, 1, 10)],
    ["2026-01-01T10:00", Date.UTC(2026, 0, 1, 10)],
    ["2026-01-01T12:00:00+02:00", Date.UTC(2026, 0, 1, 10)],
    ["2026-01-01T12:00:00+0200", Date.UTC(2026, 0, 1, 10)],
    ["2026-01-01T10:00:00.123456Z", Date.UTC(2026, 0, 1, 10, 0, 0, 123)],
  ])("%s is read as UTC-anchored %d", (text, ms) => {
    expect(parseIsoMs(text)).toBe(ms);
  });
  it.each([["2026-02-30"], ["2026-13-01"], ["yesterday"], ["-3d"], [""], ["2026-01-01T25:00:00Z"]])(
    "%j is not a timestamp",
    (text) => {
      expect(parseIsoMs(text)).toBeUndefined();
    },
  );
  it("reads what toISOString writes as the instant it came from", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0100-01-01T00:00:00Z"),
          max: new Date("9999-12-31T23:59:59.999Z"),
          noInvalidDate: true,
        }),
        (d) => {
          expect(parseIsoMs(d.toISOString())).toBe(d.getTime());
        },
      ),
      { numRuns: 500 },
    );
  });

  it("answers for every YYYY-MM-DDTHH:MM:SS.sssZ string as Date.parse does, refusing days a month does not have (the fast path agrees with the general one)", () => {
    const two = (n: number) => String(n).padStart(2, "0");
    const text = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 999 }),
      )
      .map(
        ([y, mo, d, h, mi, s, ms]) =>
          `${String(y).padStart(4, "0")}-${two(mo)}-${two(d)}T${two(h)}:${two(mi)}:${two(s)}.${String(ms).padStart(3, "0")}Z`,
      );
    fc.assert(
      fc.property(text, (t) => {
        const ms = Date.parse(t);
        const [y, mo, d] = [Number(t.slice(0, 4)), Number(t.slice(5, 7)), Number(t.slice(8, 10))];
        // The general path's check, years 0–99 included (Date.UTC reads them as 1900–1999, so they are refused).
        const day = new Date(Date.UTC(y, mo - 1, d));
        const exists = day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
        expect(parseIsoMs(t)).toBe(Number.isNaN(ms) || !exists ? undefined : ms);
      }),
      { numRuns: 500 },
    );
    expect(parseIsoMs("2024-02-29T23:59:59.999Z")).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(parseIsoMs("2100-02-29T00:00:00.000Z")).toBeUndefined();
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0 s"],
    [1000, "1 s"],
    [14 * 86_400_000 + 1000, "14 days 1 s"],
    [86_400_000, "1 day"],
    [3 * 3_600_000 + 20 * 60_000, "3 h 20 min"],
  ])("%d ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
