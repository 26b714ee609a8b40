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
  it.each([["2026-02-30"], ["2026-13-01"], ["yesterday"], ["-3d"], [""], ["2026-01-01T25:00:00Z"]])("%j is not a timestamp", (text) => {
    expect(parseIsoMs(text)).toBeUndefined();
  });
});

describe("formatDuration", () => {
  it.each([[0, "0 s"], [1000, "1 s"], [14 * 86_400_000 + 1000, "14 days 1 s"], [86_400_000, "1 day"], [3 * 3_600_000 + 20 * 60_000, "3 h 20 min"]])("%d ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
