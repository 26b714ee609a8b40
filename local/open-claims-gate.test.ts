// The back-pressure gate: refuses at the bound with Retry-After, counts claims admitted since the last count,
// reads the store at most once per refresh period however many requests arrive, and follows the store down.
import { describe, expect, it } from "vitest";
import { createOpenClaimsGate } from "./open-claims-gate.ts";

function gate(open: number[], maxOpen = 3) {
  let now = 0;
  let counts = 0;
  const g = createOpenClaimsGate({
    maxOpen,
    refreshMs: 1000,
    retryAfterS: 2,
    now: () => now,
    countOpen: async () => open[Math.min(counts++, open.length - 1)]!,
  });
  return { g, advance: (ms: number) => (now += ms), counts: () => counts };
}

describe("open claims gate", () => {
  it("admits up to the bound between two counts, then refuses with the open count and Retry-After", async () => {
    const { g, counts } = gate([1]);
    expect(await g.admit()).toEqual({ ok: true });
    expect(await g.admit()).toEqual({ ok: true });
    expect(await g.admit()).toEqual({ ok: false, open: 3, bound: 3, retryAfterS: 2 });
    expect(g.estimate()).toBe(3);
    expect(counts()).toBe(1);
  });

  it("reads the store once for a burst of concurrent requests within a refresh period", async () => {
    const { g, counts } = gate([0], 50);
    const answers = await Promise.all(Array.from({ length: 200 }, () => g.admit()));
    expect(answers.filter((a) => a.ok)).toHaveLength(50);
    expect(answers.filter((a) => !a.ok)).toHaveLength(150);
    expect(counts()).toBe(1);
  });

  it("admits again once a later count finds the claims worked off", async () => {
    const { g, advance } = gate([3, 3, 1]);
    expect((await g.admit()).ok).toBe(false);
    advance(999);
    expect((await g.admit()).ok).toBe(false);
    advance(1);
    expect((await g.admit()).ok).toBe(false);
    advance(1000);
    expect(await g.admit()).toEqual({ ok: true });
    expect(g.estimate()).toBe(2);
  });
});
