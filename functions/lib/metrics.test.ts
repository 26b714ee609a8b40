// The kernel's shadow-policy metric: each KERNEL_VERDICT recorded with a shadow verdict counts 1 when the shadow
// policy disagrees and 0 when it agrees; anything else appended to the audit counts nothing.
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { measured } from "./metrics.ts";
import type { HandlerMetrics } from "./metrics.ts";

const event = (event_type: string, details: Record<string, unknown>) => ({ event_type, details }) as AuditEvent;

describe("the shadow policy's metric", () => {
  it("counts a disagreement per shadowed kernel verdict appended, per flow, and nothing for other events", async () => {
    const emitted: Parameters<HandlerMetrics["emit"]>[0][] = [];
    const appended: AuditEvent[] = [];
    const sink: HandlerMetrics = { emit: (r) => emitted.push(r), coldStart: () => undefined };
    const audit = {
      append: async (e: AuditEvent) => void appended.push(e),
      appendAll: async (es: AuditEvent[]) => void appended.push(...es),
    };
    const real = { audit } as unknown as PipelineDeps;
    const handler = measured(
      "kernel",
      async () => real,
      sink,
      (deps) => async (events: AuditEvent[]) => {
        const { audit: measuredAudit } = await deps();
        await measuredAudit.appendAll(events.slice(1));
        await measuredAudit.append(events[0]!);
      },
    );
    const events = [
      event("KERNEL_VERDICT", { claim_id: "c1", shadow: { verdict: "REJECT", agrees: false } }),
      event("KERNEL_VERDICT", { claim_id: "c2", simulation_id: "sim", shadow: { verdict: "ACCEPT", agrees: true } }),
      event("KERNEL_VERDICT", { claim_id: "c3" }),
      event("PROPOSAL_SUBMITTED", { claim_id: "c4", shadow: { agrees: false } }),
    ];
    await handler(events);
    expect(appended).toHaveLength(4);
    expect(emitted).toEqual([
      { metrics: { ShadowDisagreements: 0 }, dimensions: [{ Flow: "simulation" }], metadata: { claim_id: "c2" } },
      { metrics: { ShadowDisagreements: 1 }, dimensions: [{ Flow: "live" }], metadata: { claim_id: "c1" } },
    ]);
  });
});
