// The model-call meter: counts and times calls; a process that stays up bounds what it remembers (issue 39).
import { describe, expect, it } from "vitest";
import type { LlmPort } from "../../core/llm/port.ts";
import { meterLlm } from "./meter.ts";

const model: LlmPort = {
  provider: "rules",
  model: "test",
  complete: async () => ({ ok: true, value: "x", attempts: 1 }) as never,
};
const call = (port: LlmPort) => port.complete({ task: "claims_analyst", messages: [] } as never);

describe("meterLlm", () => {
  it("remembers every finished call by default (a batch reads them all)", async () => {
    const meter = meterLlm(model);
    for (let i = 0; i < 5; i++) await call(meter.port);
    expect(meter.calls()).toHaveLength(5);
    expect(meter.calls()[0]).toMatchObject({ task: "claims_analyst", ok: true, attempts: 1 });
  });

  it("with `keep`, remembers only the last calls, however many are made (claims serve keeps none)", async () => {
    const some = meterLlm(model, undefined, 3);
    const none = meterLlm(model, undefined, 0);
    for (let i = 0; i < 50; i++) await Promise.all([call(some.port), call(none.port)]);
    expect(some.calls()).toHaveLength(3);
    expect(none.calls()).toHaveLength(0);
    expect(none.inFlight()).toEqual([]);
  });
});
