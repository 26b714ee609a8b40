import { describe, expect, it } from "vitest";
import { AUDIT_EVENT_TYPES, AuditEventSchema, createAuditEvent, parseAuditEvent, severityForVerdict } from "./audit.ts";
import { AuditEventError } from "./errors.ts";

const at = "2026-03-16T10:00:00.000Z";

describe("audit events", () => {
  it("builds an event with root_dfid defaulting to dfid and simulation_id in details", () => {
    const e = createAuditEvent({
      dfid: "d1",
      type: "CLAIM_RECEIVED",
      state: "RECEIVED",
      details: { claim_id: "c1" },
      at,
      simulationId: "sim_1",
    });
    expect(e).toEqual({
      dfid: "d1",
      root_dfid: "d1",
      event_type: "CLAIM_RECEIVED",
      severity: "INFO",
      state: "RECEIVED",
      details: { claim_id: "c1", simulation_id: "sim_1" },
      created_at: at,
    });
    expect(AuditEventSchema.parse(JSON.parse(JSON.stringify(e)))).toEqual(e);
  });
  it("includes the event types the spec names", () => {
    for (const t of [
      "SIMULATION_START",
      "CLAIM_RECEIVED",
      "CLAIM_EXTRACTED",
      "AGENT_STEP",
      "AGENT_DECISION",
      "CLAIMS_SELF_CHECK_FAILED",
      "KERNEL_VERDICT",
      "CLAIM_REFUND_EXECUTED",
      "CLAIM_NEEDS_REVIEW",
      "SIMULATION_END",
    ]) {
      expect(AUDIT_EVENT_TYPES).toContain(t);
    }
  });
  it.each([
    ["an unknown event type", { type: "CLAIM_DELETED" }],
    ["a created_at that is not an ISO timestamp", { at: "now" }],
    ["an empty dfid", { dfid: "" }],
    ["an empty state", { state: "" }],
  ])("refuses %s", (_name, over) => {
    expect(() =>
      createAuditEvent({ dfid: "d1", type: "CLAIM_RECEIVED", state: "RECEIVED", at, ...over } as never),
    ).toThrow(AuditEventError);
  });
  it("refuses unknown members when read back", () => {
    const e = createAuditEvent({ dfid: "d1", type: "CLAIM_RECEIVED", state: "RECEIVED", at });
    expect(() => parseAuditEvent({ ...e, extra: 1 })).toThrow(AuditEventError);
  });
  it("maps verdicts to severities", () => {
    expect([severityForVerdict("ACCEPT"), severityForVerdict("ESCALATE"), severityForVerdict("REJECT")]).toEqual([
      "INFO",
      "WARN",
      "WARN",
    ]);
  });
});
