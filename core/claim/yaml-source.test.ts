import { describe, expect, it } from "vitest";
import { closestMatch, numberFormatMessage, parseYamlSource } from "./yaml-source.ts";

describe("closestMatch", () => {
  const keys = ["max_refund_without_escalation", "return_window_days", "allowed_refund_categories"];
  it.each([
    ["max_refund_without_escallation", "max_refund_without_escalation"],
    ["return_window_dyas", "return_window_days"],
    ["RETURN_WINDOW_DAYS", "return_window_days"],
    ["allowed_refund_category", "allowed_refund_categories"],
    ["returnwindowdays", "return_window_days"],
    ["colour", undefined],
    ["max", undefined],
  ])("%s → %s", (word, expected) => {
    expect(closestMatch(word, keys)).toBe(expected);
  });
});

describe("numberFormatMessage", () => {
  it.each([
    ["80,00", /decimal point, e\.g\. 80\.00/],
    ["1,200.00", /thousands separators/],
    ["1.200,50", /thousands separators/],
    ["299.99", /quoted text/],
    ["ten", undefined],
  ])("%s", (text, expected) => {
    const message = numberFormatMessage(text);
    if (expected === undefined) expect(message).toBeUndefined();
    else expect(message).toMatch(expected);
  });
});

describe("parseYamlSource", () => {
  const text = "a:\n  b:\n    c: 1\n  list:\n    - x: { y: 2, z: 3 }\n";
  const source = parseYamlSource(text, "f.yaml");
  it.each([
    [["a"], 1],
    [["a", "b"], 2],
    [["a", "b", "c"], 3],
    [["a", "b", "missing"], 2],
    [["a", "list", 0], 5],
    [["a", "list", 0, "x", "z"], 5],
  ])("lineOf(%j) is the line of the key itself (%d)", (path, line) => {
    expect(source.lineOf(path)).toBe(line);
  });

  it("finds a decimal comma split inside { } and nothing in a block mapping", () => {
    const flow = parseYamlSource("o: { amount: 80,00, category: home }\n", "f.yaml");
    expect(flow.decimalCommaAt(["o"], "0")).toEqual({ key: "amount", written: "80,00" });
    expect(flow.decimalCommaAt(["o"], "category")).toBeUndefined();
    const block = parseYamlSource("o:\n  amount: 80,00\n", "f.yaml");
    expect(block.decimalCommaAt(["o"], "0")).toBeUndefined();
  });
});
