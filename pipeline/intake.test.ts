// Intake refuses what cannot be decided or queued (SPEC §4.1): amounts that are not finite, have more than 2
// decimals or pass 1,000,000 EUR either way, and text a queue cannot carry — with a 400 naming the field and
// nothing stored. A zero or negative amount goes on to the kernel, and any other Unicode is accepted.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claims/config.ts";
import { createRulesModel } from "../core/llm/index.ts";
import { createInProcessPipeline } from "./in-process.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = parseConfig(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml", NOW);
const pipeline = () => createInProcessPipeline({ agent: config.agent, orders: config.orders, llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }), clock: { now: () => NOW } });
const claim = (over: Record<string, unknown>) => ({ claim: { order_id: "ord_001", amount_eur: 10, category: "electronics", reason: "broken", ...over } });

describe("submitClaim bounds", () => {
  it.each([
    ["2^53", { amount_eur: 9007199254740992 }, "claim.amount_eur"],
    ["-2^53", { amount_eur: -9007199254740992 }, "claim.amount_eur"],
    ["1e21", { amount_eur: 1e21 }, "claim.amount_eur"],
    ["1e308", { amount_eur: 1e308 }, "claim.amount_eur"],
    ["5e-324", { amount_eur: 5e-324 }, "claim.amount_eur"],
    ["1,000,000.01", { amount_eur: 1_000_000.01 }, "claim.amount_eur"],
    ["3 decimals", { amount_eur: 10.001 }, "claim.amount_eur"],
    ["a lone surrogate in the reason", { reason: "broken \ud800 screen" }, "claim.reason"],
    ["a NUL in the order id", { order_id: "ord_\u0000001" }, "claim.order_id"],
    ["a control character in the category", { category: "electronics\u0007" }, "claim.category"],
  ])("refuses %s with 400 naming the field, and stores nothing", async (_name, over, path) => {
    const p = pipeline();
    const result = await p.submit(claim(over), { claimId: "clm_x" });
    expect(result).toMatchObject({ ok: false, code: "INVALID_INPUT" });
    expect(result.ok ? [] : "issues" in result ? result.issues.map((i) => i.path) : []).toContain(path);
    expect(await p.claims.getClaim("clm_x")).toBeUndefined();
    expect(p.auditEvents()).toEqual([]);
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
