// A shop's order API that is down, slow or garbled never becomes a customer REJECT: the kernel retries the claim
// (RETRY: the queue redelivers) until it has waited ORDER_SOURCE_MAX_WAIT_S since its proposal, then the claim ends
// NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE. The order facts the kernel used are recorded, so replay and backtest run
// with the API down. Real order API adapter over a scripted fetch; time from an injected clock only.
import { describe, expect, it } from "vitest";
import { createOrderApiSource } from "../adapters/shop/order-api.ts";
import { backtest } from "../core/history/backtest/index.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "./deps.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { handleProposal } from "./kernel-service.ts";
import type { ProposalMessage } from "./messages.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { decideReview } from "./review.ts";
import { handleAgentStep } from "./worker.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const WAIT_MS = 120_000;
const ACCEPT = {
  claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" },
};

type ApiState = "up" | "down" | "garbled";

/** The shop's order API as a scripted fetch: the config's orders (with a payment_ref), a switch, a request count. */
function shopApi(orders: readonly Order[]) {
  const api = { state: "up" as ApiState, requests: 0 };
  const byId = new Map(orders.map((o) => [o.order_id, { ...o, payment_ref: `pi_${o.order_id}` }]));
  const fetch = (async (url: string) => {
    api.requests++;
    if (api.state === "down") throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const order = byId.get(decodeURIComponent(String(url).split("/orders/")[1] ?? ""));
    if (!order) return new Response("", { status: 404 });
    const body = api.state === "garbled" ? { ...order, currency: "EURO" } : order;
    return new Response(JSON.stringify(body), { status: 200 });
  }) as typeof globalThis.fetch;
  const source = createOrderApiSource({ url: "https://shop.test", token: "shop-token", fetch, sleep: async () => {} });
  return { api, source };
}

/** A pipeline reading orders from the shop's API whose claim has run up to its proposal (not yet handled), or to its end. */
async function runUntilProposal(body: unknown = ACCEPT) {
  let now = NOW;
  const { api, source } = shopApi(config.orders);
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: [],
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
    settings: { ...DEFAULT_PIPELINE_SETTINGS, orderSourceWaitMs: WAIT_MS },
    overrides: { orders: source },
  });
  const submitted = await p.submit(body, { claimId: "clm_o" });
  if (!submitted.ok) throw new Error(submitted.message);
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
    else if (work.queue === "proposals") {
      const message: ProposalMessage = work.message;
      return { p, api, message: message as ProposalMessage | undefined, later: (ms: number) => void (now += ms) };
    }
  }
  return { p, api, message: undefined, later: (ms: number) => void (now += ms) };
}

/** The same, for a claim that reaches the kernel with a proposal. */
async function atProposal(body: unknown = ACCEPT) {
  const run = await runUntilProposal(body);
  if (!run.message) throw new Error("the claim never reached the kernel");
  return { ...run, message: run.message };
}

const types = (p: Awaited<ReturnType<typeof atProposal>>["p"]) => p.auditEvents().map((e) => e.event_type);

describe("an order API that cannot answer", () => {
  it.each<ApiState>(["down", "garbled"])(
    "(%s) makes the claim wait: RETRY, nothing decided, stored or published, the claim still RUNNING",
    async (state) => {
      const { p, api, message, later } = await atProposal();
      api.state = state;
      const before = types(p);
      const requestsBefore = api.requests; // triage read the order once, while the API answered
      later(WAIT_MS - 1);
      const outcome = await handleProposal(message, p.deps);
      expect(outcome).toMatchObject({ outcome: "RETRY" });
      expect(outcome.outcome === "RETRY" && outcome.reason).toMatch(
        state === "down" ? /request failed \(ECONNREFUSED\)/ : /currency "EURO" is not an ISO 4217 currency code/,
      );
      expect(api.requests - requestsBefore).toBe(3); // the adapter's bounded attempts
      expect(p.verdicts.all()).toEqual([]);
      expect(p.publisher.published).toEqual([]);
      expect(types(p)).toEqual(before);
      expect(await p.claims.getClaim("clm_o")).toMatchObject({ status: "RUNNING" });
    },
  );

  it("ends the claim NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE once it has waited the bound, never with a verdict", async () => {
    const { p, api, message, later } = await atProposal();
    api.state = "down";
    later(WAIT_MS);
    expect(await handleProposal(message, p.deps)).toEqual({
      outcome: "NEEDS_REVIEW",
      reasonCode: "ORDER_SOURCE_UNAVAILABLE",
    });
    const claim = await p.claims.getClaim("clm_o");
    expect(claim).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "ORDER_SOURCE_UNAVAILABLE" });
    expect(claim?.verdict).toBeUndefined();
    expect(claim?.reason).toMatch(/^The shop's orders could not be read for 120 s; a person decides\. Last error: /);
    expect(await p.deps.reviews.getReview("clm_o")).toMatchObject({
      origin: "NEEDS_REVIEW",
      status: "PENDING",
      reason_code: "ORDER_SOURCE_UNAVAILABLE",
    });
    expect(p.publisher.published.map((e) => e.detailType)).toEqual([
      "ClaimNeedsReview",
      "ReviewRequested",
      "ReviewOpened",
    ]);
    const needsReview = p.auditEvents().find((e) => e.event_type === "CLAIM_NEEDS_REVIEW");
    expect(needsReview?.details).toMatchObject({ reason_code: "ORDER_SOURCE_UNAVAILABLE", waited_ms: WAIT_MS });
    expect(p.verdicts.all()).toEqual([]);
  });

  it("ends the claim at the queue's last receive even before the bound (it would otherwise die in the DLQ)", async () => {
    const { p, api, message } = await atProposal();
    api.state = "down";
    expect(await handleProposal(message, p.deps, { finalAttempt: true })).toMatchObject({
      outcome: "NEEDS_REVIEW",
      reasonCode: "ORDER_SOURCE_UNAVAILABLE",
    });
  });

  it("decides as usual when the API answers again within the bound, with the same verdict as if it never failed", async () => {
    const { p, api, message, later } = await atProposal();
    api.state = "down";
    later(60_000);
    expect((await handleProposal(message, p.deps)).outcome).toBe("RETRY");
    later(WAIT_MS - 60_001);
    api.state = "up";
    const outcome = await handleProposal(message, p.deps);
    expect(outcome).toMatchObject({
      outcome: "DECIDED",
      verdict: { execution: "EXECUTED", record: { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" } },
    });
    expect(p.publisher.published.map((e) => e.detailType)).toEqual(["ClaimVerdict", "RefundExecuted"]);
  });

  it("repairs a stored, unexecuted ACCEPT once the API is back (the redelivery's reservation waits too)", async () => {
    const { p, api, message } = await atProposal();
    const reserve = p.deps.ledger.reserve;
    p.deps.ledger.reserve = () => Promise.reject(new Error("injected crash before reserving"));
    await expect(handleProposal(message, p.deps)).rejects.toThrow("injected crash");
    p.deps.ledger.reserve = reserve;
    expect(p.verdicts.all()).toMatchObject([{ execution: "PENDING" }]);
    api.state = "down";
    expect((await handleProposal(message, p.deps)).outcome).toBe("RETRY");
    api.state = "up";
    expect(await handleProposal(message, p.deps)).toMatchObject({
      outcome: "DECIDED",
      verdict: { execution: "EXECUTED" },
    });
  });

  it("answers an order the shop does not know (404) with the kernel's usual ORDER_NOT_FOUND, at triage, before any model call", async () => {
    const { p, api, message } = await runUntilProposal({ claim: { ...ACCEPT.claim, order_id: "ord_unknown" } });
    expect(message).toBeUndefined();
    expect(api.requests).toBeGreaterThan(0);
    expect(p.verdicts.all()).toMatchObject([{ record: { verdict: "REJECT", reason_code: "ORDER_NOT_FOUND" } }]);
    // The reason names who had no such order (the shop's API, not "the context store"), recorded with the inputs.
    expect(p.verdicts.all()[0]!.record.reason).toBe(
      "Order 'ord_unknown' not found: the shop's order API has no such order (it answered 404)",
    );
    const triaged = p.auditEvents().find((e) => e.event_type === "CLAIM_TRIAGED");
    expect(triaged?.details).toMatchObject({ triage_inputs: { orderAbsentFrom: "shop_api", order: null } });
    expect(types(p)).toContain("CLAIM_TRIAGED");
    expect(types(p)).not.toContain("AGENT_STEP");
  });
});

describe("a reviewer's approval while the order API cannot answer", () => {
  it("is answered 503 ORDER_SOURCE_UNAVAILABLE and changes nothing; the same approval passes once the API is back", async () => {
    const escalate = { claim: { ...ACCEPT.claim, order_id: "ord_002", amount_eur: 1200, reason: "Laptop is dead" } };
    const { p, api, message } = await atProposal(escalate);
    expect(await handleProposal(message, p.deps)).toMatchObject({
      verdict: { record: { verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" } },
    });
    const pending = await p.deps.reviews.getReview("clm_o");
    const ledger = await p.deps.ledger.get("ord_002");
    api.state = "down";
    const refused = await decideReview("clm_o", { decision: "APPROVE", reviewer: "rita" }, p.deps);
    expect(refused).toMatchObject({ ok: false, status: 503, code: "ORDER_SOURCE_UNAVAILABLE" });
    expect(!refused.ok && refused.message).toMatch(/nothing changed, try again later .*ECONNREFUSED/);
    expect(await p.deps.reviews.getReview("clm_o")).toEqual(pending);
    expect(await p.deps.ledger.get("ord_002")).toEqual(ledger);
    expect(ledger?.refunded_cents ?? 0).toBe(0);
    api.state = "up";
    const approved = await decideReview("clm_o", { decision: "APPROVE", reviewer: "rita" }, p.deps);
    expect(approved).toMatchObject({ ok: true, body: { executed: true, review: { status: "APPROVED" } } });
  });
});

describe("the order facts the kernel used", () => {
  it("are recorded in the audit (payment_ref included), so replay and backtest run with the order API down", async () => {
    const { p, api, message } = await atProposal();
    await handleProposal(message, p.deps);
    const submitted = p.auditEvents().find((e) => e.event_type === "PROPOSAL_SUBMITTED");
    expect((submitted?.details.kernel_inputs as { order: unknown }).order).toEqual({
      ...config.orders.find((o) => o.order_id === "ord_001"),
      payment_ref: "pi_ord_001",
    });

    api.state = "down";
    const requests = api.requests;
    const events = p.auditEvents();
    const replay = replayClaim("clm_o", events);
    expect(replay.status).toBe("IDENTICAL");
    const report = backtest({ histories: [{ id: "served", events }], policy: config.agent });
    expect(report.not_evaluable).toEqual([]);
    expect(report.evaluated).toBe(1);
    expect(report.flips).toEqual([]);
    expect(api.requests).toBe(requests);
  });
});
