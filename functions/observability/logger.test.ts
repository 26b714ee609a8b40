// Success lines are sampled (with their rate on each line written), warnings and errors never are, and a
// bad sample rate is refused with a message naming the variable.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, logSuccess, successSampleRateFrom } from "./logger.ts";

/** The JSON lines Powertools wrote while `f` ran (through a Console on stdout, warnings and errors on stderr). */
function captured(f: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, "write").mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    f();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines
    .join("")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

afterEach(() => vi.restoreAllMocks());

describe("success lines", () => {
  it("writes the sampled share of success lines, each with its rate, and every warning", () => {
    const draws = [0.5, 0.005, 0.2, 0.0099, 0.01];
    const logger = createLogger("claims-test", "INFO", { successSampleRate: 0.01, random: () => draws.shift()! });
    const lines = captured(() => {
      for (let i = 0; i < 5; i++) logSuccess(logger, "message handled", { messageId: `m${i}` });
      logger.warn("message will be retried", { messageId: "m9" });
    });
    expect(lines.map((l) => [l.message, l.messageId, l.sample_rate])).toEqual([
      ["message handled", "m1", 0.01],
      ["message handled", "m3", 0.01],
      ["message will be retried", "m9", undefined],
    ]);
  });

  it("writes every success line at rate 1, and through a stand-in logger as a plain info line", () => {
    const logger = createLogger("claims-test", "INFO", { successSampleRate: 1, random: () => 0.99 });
    expect(captured(() => logSuccess(logger, "request handled", { status: 202 }))).toMatchObject([
      { message: "request handled", status: 202, sample_rate: 1 },
    ]);
    const info = vi.fn();
    logSuccess({ info, debug: vi.fn(), warn: vi.fn(), error: vi.fn() }, "request handled", { status: 200 });
    expect(info).toHaveBeenCalledWith("request handled", { status: 200 });
  });

  it("writes none at rate 0, and none below the logger's level", () => {
    expect(
      captured(() =>
        logSuccess(
          createLogger("claims-test", "INFO", { successSampleRate: 0, random: () => 0 }),
          "message handled",
          {},
        ),
      ),
    ).toEqual([]);
    expect(
      captured(() => logSuccess(createLogger("claims-test", "WARN", { successSampleRate: 1 }), "message handled", {})),
    ).toEqual([]);
  });
});

describe("successSampleRateFrom", () => {
  it.each([
    [undefined, 1],
    ["", 1],
    ["0.01", 0.01],
    ["0", 0],
    [" 1 ", 1],
  ])("reads %j as %d", (value, rate) => {
    expect(successSampleRateFrom({ CLAIMS_SUCCESS_LOG_SAMPLE_RATE: value })).toBe(rate);
  });

  it.each(["1.5", "-0.1", "one percent", "NaN"])("refuses %j, naming the variable", (value) => {
    expect(() => successSampleRateFrom({ CLAIMS_SUCCESS_LOG_SAMPLE_RATE: value })).toThrow(
      /CLAIMS_SUCCESS_LOG_SAMPLE_RATE must be a number from 0 to 1/,
    );
  });
});
