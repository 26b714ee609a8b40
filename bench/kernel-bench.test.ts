import { describe, expect, it } from "vitest";
import { decideClaim } from "../core/kernel/kernel.ts";
import {
  auditPerClaim,
  benchOrders,
  checkRound,
  KERNEL_CASES,
  kernelContender,
  kernelInput,
  loadBenchConfig,
  pipelineContender,
  runPipelineRound,
} from "./kernel.bench.ts";

const config = loadBenchConfig();

describe("kernel bench inputs", () => {
  it.each(KERNEL_CASES.map((c) => [c.case, c] as const))(
    "the %s input gets its verdict and reason code from the kernel",
    (_name, spec) => {
      const verdict = decideClaim(kernelInput(config, spec));
      expect({ verdict: verdict.verdict, reason_code: verdict.reason_code }).toEqual({
        verdict: spec.verdict,
        reason_code: spec.reasonCode,
      });
    },
  );

  it("gives every claim of a round its own order, copied from the template", () => {
    const orders = benchOrders(config, KERNEL_CASES[0]!, 3);
    expect(orders.map((o) => o.order_id)).toEqual(["ord_accept_000001", "ord_accept_000002", "ord_accept_000003"]);
    const template = config.orders.find((o) => o.order_id === "ord_001")!;
    for (const o of orders) expect({ ...o, order_id: template.order_id }).toEqual(template);
  });
});

describe("kernel bench pipeline rounds", () => {
  it.each(KERNEL_CASES.map((c) => [c.case, c] as const))(
    "a round of %s claims is decided as expected and audited per claim",
    async (_name, spec) => {
      const round = await runPipelineRound(config, spec, 4);
      expect(round.outcomes).toHaveLength(4);
      expect(() => checkRound(spec, round)).not.toThrow();
      const audit = auditPerClaim(round.audit);
      expect(audit.claims).toBe(4);
      expect(audit.byType.get("KERNEL_VERDICT")).toBeGreaterThan(0);
      expect(audit.byType.has("CLAIM_REFUND_EXECUTED")).toBe(spec.verdict === "ACCEPT");
      expect(audit.bytesPerClaim).toBeGreaterThan(1000);
    },
  );

  it("reports a round whose claims end with another verdict", async () => {
    const [accept, reject] = KERNEL_CASES;
    const round = await runPipelineRound(config, accept!, 2);
    expect(() => checkRound(reject!, round)).toThrow(/2 of 2 claims ended wrong/);
  });

  it("refuses to size an audit without claim events", () => {
    expect(() => auditPerClaim([])).toThrow(/no claim events/);
  });
});

describe("kernel bench contenders", () => {
  it("times the kernel per decision and checks the last verdict of each sample", () => {
    const [accept, reject] = KERNEL_CASES;
    const ok = kernelContender(accept!, kernelInput(config, accept!));
    ok.op();
    expect(() => ok.after?.()).not.toThrow();
    const wrong = kernelContender(reject!, kernelInput(config, accept!)); // an ACCEPT input where a REJECT is expected
    wrong.op();
    expect(() => wrong.after?.()).toThrow(/the timed calls decided ACCEPT/);
  });

  it("runs a fresh pipeline round per sample, per claim, and checks it afterwards", async () => {
    const c = pipelineContender(config, KERNEL_CASES[1]!, 3);
    expect(c).toMatchObject({ unitsPerOp: 3, opsPerSample: 1 });
    await c.before?.();
    await c.op();
    await expect(Promise.resolve(c.after?.())).resolves.toBeUndefined();
  });
});
