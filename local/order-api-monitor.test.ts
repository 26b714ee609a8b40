// The order API's state for `claims serve`: checked at start and again on each tick, GET /health following it.
import { describe, expect, it } from "vitest";
import type { OrderApiCheck } from "../adapters/shop/order-api.ts";
import { healthAnswer } from "./http-front.ts";
import { orderApiMonitorFromEnv, startOrderApiMonitor } from "./order-api-monitor.ts";

/** A check answering from a script, and a timer the test ticks by hand. */
function scripted(...answers: OrderApiCheck[]) {
  let tick: (() => void) | undefined;
  let stopped = false;
  const check = async () => answers.shift() ?? { ok: true as const };
  const every = (run: () => void) => {
    tick = run;
    return { stop: () => (stopped = true) };
  };
  return { check, every, tick: () => tick!(), stopped: () => stopped };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the order API monitor", () => {
  it("knows the first check's outcome at once, and follows each later check", async () => {
    const down = { ok: false as const, problem: "request failed (ECONNREFUSED)" };
    const s = scripted(down, down, { ok: true });
    const changes: OrderApiCheck[] = [];
    const monitor = await startOrderApiMonitor(s.check, { every: s.every, onChange: (c) => changes.push(c) });
    expect(monitor.first).toEqual(down);
    expect(monitor.unreachable()).toBe(true);
    s.tick();
    await settle();
    expect(monitor.unreachable()).toBe(true);
    s.tick();
    await settle();
    expect(monitor.unreachable()).toBe(false);
    expect(changes).toEqual([{ ok: true }]);
    monitor.stop();
    expect(s.stopped()).toBe(true);
  });

  it("counts a check that throws as the API not answering", async () => {
    const monitor = await startOrderApiMonitor(
      async () => {
        throw new Error("boom");
      },
      { every: () => ({ stop: () => undefined }) },
    );
    expect(monitor.first).toEqual({ ok: false, problem: "Error: boom" });
  });

  it("has nothing to check for the table", async () => {
    expect(await orderApiMonitorFromEnv({})).toBeUndefined();
    expect(await orderApiMonitorFromEnv({ ORDER_SOURCE: "table" })).toBeUndefined();
  });
});

describe("GET /health's answer", () => {
  it.each([
    [{ llm: false, orders: false }, { status: "ok" }],
    [
      { llm: true, orders: false },
      { status: "degraded", llm: "unreachable" },
    ],
    [
      { llm: false, orders: true },
      { status: "degraded", orders: "unreachable" },
    ],
    [
      { llm: true, orders: true },
      { status: "degraded", llm: "unreachable", orders: "unreachable" },
    ],
  ])("%j → %j", (down, answer) => {
    expect(JSON.stringify(healthAnswer(down))).toBe(JSON.stringify(answer));
  });
});
