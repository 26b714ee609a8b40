// Intake refuses what cannot be decided or queued (docs/config.md): amounts that are not finite, have more than 2
// decimals or pass 1,000,000 EUR either way, and text a queue cannot carry — with a 400 naming the field and
// nothing stored. A zero or negative amount goes on to the kernel, and any other Unicode is accepted.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { extractClaim } from "./intake.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const pipeline = () =>
  createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
const claim = (over: Record<string, unknown>) => ({
  claim: { order_id: "ord_001", amount_eur: 10, category: "electronics", reason: "broken", ...over },
});

describe("submitClaim bounds", () => {
  it.each([
    ["2^53", { amount_eur: 9007199254740992 }, "claim.amount_eur"],
    ["-2^53", { amount_eur: -9007199254740992 }, "claim.amount_eur"],
    ["1e21", { amount_eur: 1e21 }, "claim.amount_eur"],
    ["1e308", { amount_eur: 1e308 }, "claim.amount_eur"],
    ["5e-324", { amount_eur: 5e-324 }, "claim.amount_eur"],
    ["1,000,000.01", { amount_eur: 1_000_000.01 }, "claim.amount_eur"],
    ["4 decimals", { amount_eur: 10.0001 }, "claim.amount_eur"],
    ["a lone surrogate in the reason", { reason: "broken \ud800 screen" }, "claim.reason"],
    ["a NUL in the order id", { order_id: "ord_\u0000001" }, "claim.order_id"],
    ["a control character in the category", { category: "electronics\u0007" }, "claim.category"],
    [
      "CR/LF in the order id (a forged line of claims list)",
      { order_id: "ord_001\r\nclm_x DECIDED" },
      "claim.order_id",
    ],
    ["a tab in the customer id", { customer_id: "cus\t1" }, "claim.customer_id"],
    ["U+2028 in the order id", { order_id: "ord_001\u2028x" }, "claim.order_id"],
    ["a C1 control in the category", { category: "electronics\u009b" }, "claim.category"],
  ])("refuses %s with 400 naming the field, and stores nothing", async (_name, over, path) => {
    const p = pipeline();
    const result = await p.submit(claim(over), { claimId: "clm_x" });
    expect(result).toMatchObject({ ok: false, code: "INVALID_INPUT" });
    expect(result.ok ? [] : "issues" in result ? result.issues.map((i) => i.path) : []).toContain(path);
    expect(await p.claims.getClaim("clm_x")).toBeUndefined();
    expect(p.auditEvents()).toEqual([]);
  });

  it.each([
    ["label", { label: "row 1\nrow 2" }],
    ["simulation_id", { simulation_id: "sim\r1" }],
  ])("refuses a control character in the %s with 400, and stores nothing", async (field, extra) => {
    const p = pipeline();
    const result = await p.submit({ ...claim({}), ...extra }, { claimId: "clm_l" });
    expect(result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: field }] });
    expect(await p.claims.getClaim("clm_l")).toBeUndefined();
  });

  it("refuses free text with a lone surrogate or a control character, and stores nothing", async () => {
    for (const claim_text of ["order ord_001 \udfff broken", "order ord_001 \u0001 broken"]) {
      const p = pipeline();
      const result = await p.submit({ claim_text }, { claimId: "clm_t" });
      expect(result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "claim_text" }] });
      expect(await p.claims.getClaim("clm_t")).toBeUndefined();
    }
  });

  it.each([
    ["exactly 1,000,000", { amount_eur: 1_000_000 }],
    ["exactly -1,000,000", { amount_eur: -1_000_000 }],
    ["zero", { amount_eur: 0 }],
    ["2 decimals", { amount_eur: 0.07 }],
    ["emoji, CJK Ext-B, U+FFFE and U+FFFF, tabs and newlines", { reason: "broken 😀 𠀀 \ufffe\uffff\ttab\nline" }],
  ])("accepts %s", async (_name, over) => {
    const p = pipeline();
    expect(await p.submit(claim(over), { claimId: "clm_ok" })).toMatchObject({ ok: true });
  });
});

describe("extractClaim after a crash", () => {
  /** A pipeline whose audit log crashes once, right after it appended the first event of `type`. */
  function crashingAfter(type: string) {
    let now = NOW;
    const rules = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
    let calls = 0;
    const llm = {
      ...rules,
      complete: ((req: Parameters<typeof rules.complete>[0]) => (
        req.task === "extract_claim" && calls++, rules.complete(req)
      )) as typeof rules.complete,
    };
    const p = createInProcessPipeline({ agent: config.agent, orders: config.orders, llm, clock: { now: () => now } });
    let crashed = false;
    const audit = {
      ...p.deps.audit,
      append: async (e: Parameters<typeof p.deps.audit.append>[0]) => {
        await p.deps.audit.append(e);
        if (!crashed && e.event_type === type) {
          crashed = true;
          throw new Error(`crash after ${type}`);
        }
      },
      appendAll: async (events: Parameters<typeof p.deps.audit.appendAll>[0]) => {
        await p.deps.audit.appendAll(events);
        if (!crashed && events.some((e) => e.event_type === type)) {
          crashed = true;
          throw new Error(`crash after ${type}`);
        }
      },
    };
    return { p, deps: { ...p.deps, audit }, later: () => void (now += 60_000), calls: () => calls };
  }

  it.each([
    // a text the patterns cannot read alone (no category), so its extraction asks the model
    ["CLAIM_EXTRACTED", "I bought order ord_001 for 299.99 EUR, it stopped working", "DECIDED"],
    ["CLAIM_EXTRACTION_FAILED", "Hi, the sofa I bought last month is falling apart, I paid 300 EUR.", "NEEDS_REVIEW"],
  ])(
    "finishes the recorded %s on the redelivery: one extraction in the audit, one model call, replay identical",
    async (type, text, status) => {
      const { p, deps, later, calls } = crashingAfter(type);
      const submitted = await p.submit({ claim_text: text }, { claimId: "clm_crash" });
      expect(submitted.ok).toBe(true);
      const work = p.queues.take();
      expect(work?.queue).toBe("extraction");
      await expect(extractClaim("clm_crash", { finalAttempt: true }, deps)).rejects.toThrow(`crash after ${type}`);
      later(); // the redelivery comes a minute later: an extraction made now would carry another instant
      await extractClaim("clm_crash", { finalAttempt: true }, deps);
      await p.drain();
      expect(calls()).toBe(1);
      expect(p.auditEvents().filter((e) => e.event_type === type)).toHaveLength(1);
      expect((await p.claims.getClaim("clm_crash"))?.status).toBe(status);
      const review = await p.deps.reviews.getReview("clm_crash");
      expect(
        replayClaim("clm_crash", p.auditEvents(), review ? { review: { status: review.status } } : {}).status,
      ).toBe("IDENTICAL");
    },
  );
});
