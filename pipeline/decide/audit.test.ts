// Audit details are typed by their event's schema: a wrong field does not compile (the @ts-expect-error lines
// below are checked by tsc), and what the producers record parses with the same schema, which names every field.
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { auditEvent, parseAuditDetails } from "../../core/history/audit-events.ts";
import type { ClaimAuditDetails } from "../../core/history/audit-events.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import { claimAudit } from "./audit.ts";
import type { ReviewCauseEvent } from "./audit.ts";
import { createInProcessPipeline, handleWork } from "../in-process.ts";
import { endOverdueClaim } from "../overdue.ts";
import { bundledConfig } from "../bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
// The seed's two-agent crew (`crew_shape: two_agents`): these tests follow its Decision Maker's steps.
const config = bundledConfig(NOW, { crewShape: "two_agents" });
const record = { claim_id: "clm_1", dfid: "dfid_clm_1", root_dfid: "dfid_clm_1", simulation_id: undefined };

/** Every field of `event`'s details is named by its type's schema, and parses as recorded. */
function expectDefined(event: AuditEvent): void {
  const read = parseAuditDetails(event);
  expect(read.ok ? undefined : read.problem, event.event_type).toBeUndefined();
  if (read.ok)
    expect(read.parsed.details, `${event.event_type}: a field its schema does not name`).toEqual(event.details);
}

describe("audit details typed by their schema", () => {
  it("refuses at compile time, and at run time, details that do not follow the event's schema", () => {
    const refund = {
      execution_id: "exe_1",
      dfid: "dfid_clm_1",
      order_id: "ord_1",
      amount_eur: 10,
      verdict_id: "vrd_1",
      amount_cents: 1000,
    };
    const inputs = {} as ClaimAuditDetails<"PROPOSAL_SUBMITTED">["kernel_inputs"];
    const wrong = [
      claimAudit(record, "CLAIM_REFUND_NOT_EXECUTED", "DECIDED", NOW, {
        // @ts-expect-error a renamed field: the schema says verdict_id
        verdictId: "vrd_1",
        code: "EXCEEDS_ORDER_AMOUNT",
        reason: "r",
      }),
      // @ts-expect-error a required field missing (code)
      claimAudit(record, "CLAIM_REFUND_NOT_EXECUTED", "DECIDED", NOW, { verdict_id: "vrd_1", reason: "r" }),
      // @ts-expect-error a renamed optional field: the schema says lost_races
      claimAudit(record, "PROPOSAL_SUBMITTED", "RUNNING", NOW, { kernel_inputs: inputs, lostRaces: 1 }),
      // @ts-expect-error a value of another type
      claimAudit(record, "LLM_CALL", "RUNNING", NOW, { role: "r", agent_id: "a", correlation_id: "c", ok: "yes" }),
      // @ts-expect-error another event's details
      claimAudit(record, "CREW_STARTED", "RUNNING", NOW, { reason_code: "X", reason: "r", review_id: "rev_1" }),
      // @ts-expect-error a ledger code the ledger does not have
      claimAudit(record, "CLAIM_REFUND_NOT_EXECUTED", "DECIDED", NOW, { verdict_id: "v", code: "NOPE", reason: "r" }),
      // @ts-expect-error a field of no event
      claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", NOW, { ...refund, amountCents: 1000 }),
      // @ts-expect-error a run's event is not a claim's
      claimAudit(record, "SIMULATION_END", "DONE", NOW, {}),
      // @ts-expect-error a run's end without its results
      auditEvent({ dfid: "d", type: "SIMULATION_END", state: "DONE", at: "2026-06-01T12:00:00Z", details: {} }),
    ];
    // At run time the schema refuses each, or does not name the wrong field.
    for (const event of wrong) {
      const read = parseAuditDetails(event);
      expect(read.ok && isDeepStrictEqual(read.parsed.details, event.details), event.event_type).toBe(false);
    }

    // @ts-expect-error the crew's failure names its code, not error_code
    const cause: ReviewCauseEvent = { type: "CREW_FAILED", details: { error_code: "X" } };
    const withId: ClaimAuditDetails<"CLAIM_NEEDS_REVIEW"> = {
      // @ts-expect-error the claim id is the record's, not the producer's
      claim_id: "x",
      reason_code: "X",
      reason: "",
      review_id: "r",
    };
    expect([cause, withId]).toHaveLength(2);

    const right = claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", NOW, refund);
    expectDefined(right);
  });

  it("parses a late answer's CREW_COMPLETED and an overdue claim's CLAIM_NEEDS_REVIEW with their schemas", async () => {
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
    });
    const claim = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };
    const submitted = await p.submit({ claim }, { claimId: "clm_late" });
    expect(submitted.ok).toBe(true);
    // The claim runs out of time while the Decision Maker's step is in flight; its proposal arrives afterwards.
    for (let work = p.queues.take(); work; work = p.queues.take()) {
      if (work.queue === "agent-steps" && work.message.request.phaseIndex === 1) {
        await endOverdueClaim("clm_late", { waitedMs: 5000, detail: "the batch waited" }, p.deps);
        await handleWork(work, p.deps);
        break;
      }
      await handleWork(work, p.deps);
    }
    await p.drain();
    const events = p.auditEvents();
    const types = events.map((e) => e.event_type);
    expect(types).toContain("CREW_COMPLETED");
    expect(types).toContain("CLAIM_NEEDS_REVIEW");
    expect(events.find((e) => e.event_type === "CLAIM_NEEDS_REVIEW")?.details).toMatchObject({ waited_ms: 5000 });
    for (const e of events) expectDefined(e);
  });
});
