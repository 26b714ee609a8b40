// A race (rows submitted at once) is matched as a group, by count: the answer every surface of a batch shows.
import { describe, expect, it } from "vitest";
import { matchRace, matchRaces, raceText } from "./race.ts";

const expected = [
  { id: "CL1", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" },
  { id: "CL2", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" },
  { id: "CL3", verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" },
  { id: "CL4", verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" },
];
const accepted = (id: string) => ({ id, verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" });
const limited = (id: string) => ({ id, verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" });

describe("matchRace", () => {
  it.each([
    [
      "the expected rows win",
      [accepted("CL1"), accepted("CL2"), limited("CL3"), limited("CL4")],
      true,
      "2 of 4 accepted",
    ],
    [
      "other rows win, as many",
      [accepted("CL1"), limited("CL2"), limited("CL3"), accepted("CL4")],
      true,
      "2 of 4 accepted",
    ],
    [
      "three win",
      [accepted("CL1"), accepted("CL2"), accepted("CL3"), limited("CL4")],
      false,
      "3 of 4 accepted (expected 2)",
    ],
    ["one row never ended", [accepted("CL1"), accepted("CL2"), limited("CL3")], false, "2 of 4 accepted"],
    [
      "the count holds but a code differs",
      [
        accepted("CL1"),
        accepted("CL2"),
        limited("CL3"),
        { id: "CL4", verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" },
      ],
      false,
      "2 of 4 accepted",
    ],
  ])("%s", (_name, actual, matches, outcome) => {
    expect(matchRace("customer-limit", expected, actual)).toEqual({
      race: "customer-limit",
      ids: ["CL1", "CL2", "CL3", "CL4"],
      matches,
      outcome,
    });
  });

  it("lets a row without a reason code take any code of its verdict, after the exact ones", () => {
    const loose = [
      { id: "a", verdict: "ESCALATE" },
      { id: "b", verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" },
    ];
    const actual = [limited("a"), { id: "b", verdict: "ESCALATE", reason_code: "LOW_CONFIDENCE" }];
    expect(matchRace("r", loose, actual)).toMatchObject({ matches: true, outcome: "2 of 2 escalated" });
  });

  it("groups every race of a run in the order they appear and leaves other rows out", () => {
    const scenarios = [
      { id: "A", verdict: "ACCEPT" },
      ...expected.map((e) => ({ ...e, race: "customer-limit" })),
      { id: "x", verdict: "REJECT", race: "twice" },
      { id: "y", verdict: "REJECT", race: "twice" },
    ];
    const groups = matchRaces(scenarios, [
      accepted("A"),
      accepted("CL1"),
      accepted("CL2"),
      limited("CL3"),
      limited("CL4"),
    ]);
    expect(groups.map((g) => [g.race, g.ids, g.matches, raceText(g)])).toEqual([
      ["customer-limit", ["CL1", "CL2", "CL3", "CL4"], true, "race customer-limit: 2 of 4 accepted ✓"],
      ["twice", ["x", "y"], false, "race twice: 0 of 2 rejected (expected 2) ✗"],
    ]);
  });
});
