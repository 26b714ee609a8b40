import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical.ts";
import { createInMemoryMemory } from "./memory.ts";
import { configuredCrew, crewConfigs, drive, seededOrder, seededWorker } from "./test-kit.ts";
import type { CrewConfig } from "./test-kit.ts";

const flatConfig: fc.Arbitrary<CrewConfig> = crewConfigs({ maxMercs: 6, nested: ["none"] });

const run = (c: CrewConfig, extra: { orderSeed?: number; duplicate?: boolean } = {}) =>
  drive({
    graph: configuredCrew(c),
    worker: seededWorker(c.seed),
    maxAttempts: c.maxAttempts,
    memory: createInMemoryMemory,
    tickAfterMs: 10_000,
    ...(extra.orderSeed === undefined ? {} : { order: seededOrder(extra.orderSeed) }),
    ...(extra.duplicate ? { duplicate: true } : {}),
  });

describe("determinism", () => {
  it("same crew, same answers in the same order: byte-identical canonical outbound log", () => {
    fc.assert(
      fc.property(flatConfig, (c) => {
        expect(canonicalize(run(c).log)).toBe(canonicalize(run(c).log));
      }),
      { numRuns: 50 },
    );
  });

  it("any permutation of the answers within a phase gives a byte-identical canonical outbound log", () => {
    fc.assert(
      fc.property(flatConfig, fc.integer(), fc.integer(), (c, o1, o2) => {
        const a = run(c, { orderSeed: o1 });
        const b = run(c, { orderSeed: o2 });
        expect(canonicalize(b.log)).toBe(canonicalize(a.log));
        expect(a.session.status).not.toBe("running");
      }),
      { numRuns: 150 },
    );
  });

  it("duplicated deliveries never change the outcome: the log differs only by DUPLICATE/LATE diagnostics", () => {
    fc.assert(
      fc.property(flatConfig, fc.integer(), (c, o) => {
        const once = run(c, { orderSeed: o });
        const twice = run(c, { orderSeed: o, duplicate: true });
        const extra = twice.log.filter(
          (e) => e.type === "crew.diagnostic" && (e.code === "DUPLICATE_DELIVERY" || e.code === "LATE_DELIVERY"),
        );
        // every second copy of an answer is reported once, and nothing else changes
        expect(extra.length).toBe(once.inputs.filter((i) => i.event.type !== "crew.tick").length);
        const onceDiag = once.log.filter((e) => e.type === "crew.diagnostic").length;
        expect(twice.log.filter((e) => e.type === "crew.diagnostic").length - onceDiag).toBe(extra.length);
        const strip = (log: typeof once.log) =>
          log.filter(
            (e) => !(e.type === "crew.diagnostic" && (e.code === "DUPLICATE_DELIVERY" || e.code === "LATE_DELIVERY")),
          );
        expect(canonicalize(strip(twice.log))).toBe(canonicalize(strip(once.log)));
        expect(canonicalize(twice.session.snapshot())).toBe(canonicalize(once.session.snapshot()));
      }),
      { numRuns: 100 },
    );
  });
});
