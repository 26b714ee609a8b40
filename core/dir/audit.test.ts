import { describe, expect, it } from "vitest";
import { AUDIT_EVENT_TYPES, AuditEventSchema, createAuditEvent, createInMemoryAuditLog, parseAuditEvent, severityForVerdict } from "./audit.ts";
import { AuditEventError } from "./errors.ts";

const at = "2026-03-16T10:00:00.000Z";

describe("audit events", () => {
  it("builds an event with root_dfid defaulting to dfid and simulation_id in details", () => {
    const e = createAuditEvent({ dfid: "d1", type: "CLAIM_RECEIVED", state: "RECEIVED", details: { claim_id: "c1" }, at, simulationId: "sim_1" });
    expect(e).toEqual({ dfid: "d1", root_dfid: "d1", event_type: "CLAIM_RECEIVED", severity: "INFO", state: "RECEIVED", details: { claim_id: "c1", simulation_id: "sim_1" }, created_at: at });
    expect(AuditEventSchema.parse(JSON.parse(JSON.stringify(e)))).toEqual(e);
  });
  it("includes the event types the spec names", () => {
    for (const t of ["SIMULATION_START", "CLAIM_RECEIVED", "CLAIM_EXTRACTED", "AGENT_STEP", "AGENT_DECISION", "CLAIMS_SELF_CHECK_FAILED", "KERNEL_VERDICT", "CLAIM_REFUND_EXECUTED", "CLAIM_NEEDS_REVIEW", "SIMULATION_END"]) {
      expect(AUDIT_EVENT_TYPES).toContain(t);
    }
  });
  it.each([
    ["an unknown event type", { type: "CLAIM_DELETED" }],
    ["a created_at that is not an ISO timestamp", { at: "now" }],
    ["an empty dfid", { dfid: "" }],
    ["an empty state", { state: "" }],
  ])("refuses %s", (_name, over) => {
    expect(() => createAuditEvent({ dfid: "d1", type: "CLAIM_RECEIVED", state: "RECEIVED", at, ...over } as never)).toThrow(AuditEventError);
  });
  it("refuses unknown members when read back", () => {
    const e = createAuditEvent({ dfid: "d1", type: "CLAIM_RECEIVED", state: "RECEIVED", at });
    expect(() => parseAuditEvent({ ...e, extra: 1 })).toThrow(AuditEventError);
  });
  it("maps verdicts to severities", () => {
    expect([severityForVerdict("ACCEPT"), severityForVerdict("ESCALATE"), severityForVerdict("REJECT")]).toEqual(["INFO", "WARN", "WARN"]);
  });
});

describe("in-memory audit log", () => {
  it("answers by DFID (own or root) and by simulation, in append order, with copies", async () => {
    const log = createInMemoryAuditLog();
    await log.append(createAuditEvent({ dfid: "sim_root", type: "SIMULATION_START", state: "RUNNING", at, simulationId: "sim_1" }));
    await log.append(createAuditEvent({ dfid: "d1", rootDfid: "sim_root", type: "CLAIM_RECEIVED", state: "RECEIVED", at, simulationId: "sim_1" }));
    await log.append(createAuditEvent({ dfid: "d2", type: "CLAIM_RECEIVED", state: "RECEIVED", at }));
    await log.append(createAuditEvent({ dfid: "d1", rootDfid: "sim_root", type: "KERNEL_VERDICT", state: "DECIDED", at, simulationId: "sim_1" }));
    expect((await log.byDfid("d1")).map((e) => e.event_type)).toEqual(["CLAIM_RECEIVED", "KERNEL_VERDICT"]);
    expect((await log.byDfid("sim_root")).map((e) => e.dfid)).toEqual(["sim_root", "d1", "d1"]);
    expect((await log.bySimulation("sim_1")).length).toBe(3);
    expect(await log.bySimulation("sim_2")).toEqual([]);
    const [first] = await log.byDfid("d2");
    first!.state = "CHANGED";
    expect((await log.byDfid("d2"))[0]!.state).toBe("RECEIVED");
  });
  it("refuses an invalid event on append", async () => {
    const log = createInMemoryAuditLog();
    await expect(log.append({ dfid: "d" } as never)).rejects.toThrow(AuditEventError);
    expect(log.all()).toEqual([]);
  });
});
