// Chaos flows that draw an outcome policy (chaos/outcomes.ts): store credit meets the provider's faults, crashes and
// redeliveries and keeps every money invariant; an exchange holds its line(s) and is never paid; and the credit
// invariants of the provider's book are seen to fail on a flow's observation with the damage done to it.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { OutcomePolicySchema } from "../core/integrity/contracts.ts";
import { chaosEnv, runChaosFlow } from "./flow.ts";
import { checkFlowInvariants } from "./invariants.ts";
import type { FlowObservation } from "./invariants.ts";
import { planOutcomes } from "./outcomes.ts";
import type { ProviderPayout } from "./payment-provider.ts";
import type { PaymentPlan } from "./plan.ts";
import { createRng } from "./rng.ts";

const env = chaosEnv(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml");

/** A provider that refuses, times out (before and after the work), settles late and webhooks twice. */
const HARSH: PaymentPlan = {
  fail: 0.3,
  pending: 0.5,
  lateFail: 0.3,
  maxSettleMs: 3_600_000,
  timeout: 0.4,
  timeoutAfterWork: 0.5,
  duplicateWebhook: 0.5,
  staleWebhook: 0.5,
  forgedWebhook: 0.3,
  noPaymentRef: 0,
  reviewer: { decide: 1, retry: 0.6, concurrent: 0.3, repeat: 0.3 },
};

describe("planOutcomes", () => {
  it("gives one flow in four a valid outcome policy: store credit with its bonus, or an exchange for a category", () => {
    const drawn = Array.from({ length: 400 }, (_, i) => planOutcomes(createRng(i + 1)));
    const policies = drawn.filter((p) => p !== undefined);
    expect(policies.length).toBeGreaterThan(60);
    expect(policies.length).toBeLessThan(140);
    for (const p of policies) expect(OutcomePolicySchema.safeParse(p).success).toBe(true);
    const fields = policies.flatMap((p) => [p, ...Object.values(p.categories ?? {})]);
    expect(new Set(fields.map((f) => f.outcome))).toEqual(new Set(["REFUND", "STORE_CREDIT", "EXCHANGE"]));
    expect(new Set(fields.flatMap((f) => f.store_credit_bonus_pct ?? []))).toEqual(new Set([0, 10, 25]));
  });
});

const credit: FlowObservation[] = [];
const exchange: FlowObservation[] = [];
const failures: string[] = [];
let issued = 0;
let exchanges = 0;

beforeAll(async () => {
  for (let k = 0; k < 10; k++) {
    const r = await runChaosFlow(env, 21, k, {
      keep: true,
      payments: HARSH,
      outcomes: { outcome: "STORE_CREDIT", store_credit_bonus_pct: 25 },
    });
    issued += r.counts.outcomes.credits;
    if (r.violations.length > 0) failures.push(`credit flow ${k}: ${r.violations.slice(0, 3).join("; ")}`);
    else credit.push(r.observation!);
  }
  for (let k = 0; k < 6; k++) {
    const r = await runChaosFlow(env, 21, k, { keep: true, outcomes: { outcome: "EXCHANGE" } });
    exchanges += r.counts.outcomes.exchanges;
    if (r.violations.length > 0) failures.push(`exchange flow ${k}: ${r.violations.slice(0, 3).join("; ")}`);
    else exchange.push(r.observation!);
  }
}, 600_000);

const violations = (o: FlowObservation) => checkFlowInvariants(o).violations.join("\n");
const payouts = (o: FlowObservation) => o.payments!.book.payouts as unknown as Writable<ProviderPayout>[];
type Writable<T> = { -readonly [K in keyof T]: T[K] };

describe("chaos flows with store credit and exchanges", () => {
  it("keep every invariant through the provider's faults, issuing credit and asking exchanges", () => {
    expect(failures).toEqual([]);
    expect(issued).toBeGreaterThan(0);
    expect(exchanges).toBeGreaterThan(0);
  });

  it("issue each credit as the base plus its 25% bonus, once", () => {
    const all = credit.flatMap((o) => payouts(o).map((p) => ({ o, p })));
    expect(all.some(({ p }) => p.credit)).toBe(true);
    for (const { o, p } of all.filter(({ p }) => p.credit)) {
      const executed = o.events.find((e) => e.detailType === "RefundExecuted" && e.detail.execution_id === p.key)!;
      const bonus = (executed.detail.credit as { bonus_pct: number }).bonus_pct;
      expect(bonus).toBe(25);
      expect(p.amountMinor).toBeGreaterThan(0);
    }
  });
});

describe("the provider-book invariants of credit can fail", () => {
  const creditFlow = () => structuredClone(credit.find((o) => payouts(o).some((p) => p.credit))!);

  it("a credit issued short of (or over) its base plus bonus", () => {
    const o = creditFlow();
    payouts(o).find((p) => p.credit)!.amountMinor -= 1;
    expect(violations(o)).toMatch(/issued store credit of \d+ .+ under \S+, not the base \d+ plus its bonus \d+/);
  });

  it("a credit paid as cash", () => {
    const o = creditFlow();
    delete payouts(o).find((p) => p.credit)!.credit;
    expect(violations(o)).toMatch(/as cash, but store credit was authorised/);
  });

  it("an exchanged claim paid by the provider", () => {
    const o = structuredClone(exchange.find((x) => x.claims.some((c) => c.outcome === "EXCHANGE"))!);
    const claim = o.claims.find((c) => c.outcome === "EXCHANGE")!;
    payouts(o).push({
      refundId: "re_x",
      key: "exe_x",
      claimId: claim.claim_id,
      orderId: "ord_x",
      amountMinor: 1,
      at: 0,
    });
    expect(violations(o)).toMatch(new RegExp(`claim ${claim.claim_id} was exchanged, but the provider paid exe_x`));
  });
});
