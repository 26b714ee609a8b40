import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonValue } from "./json.ts";
import type { VotingStrategy } from "./schema.ts";
import type { Ballot } from "./voting.ts";
import { UnknownVotingStrategyError } from "./errors.ts";
import { resolveVotes } from "./voting.ts";

const ok = (output: JsonValue): Ballot => ({ ok: true, output });
const no: Ballot = { ok: false };

type Row = { strategy: VotingStrategy; ballots: Ballot[]; output?: JsonValue; code?: string; winnerVotes?: number };

const table: Row[] = [
  { strategy: "first_valid", ballots: [no, ok("b"), ok("a"), ok("a")], output: "b", winnerVotes: 1 },
  { strategy: "first_valid", ballots: [no, no], code: "NO_VALID_OUTPUT" },
  { strategy: "majority", ballots: [ok("a"), ok("b"), ok("a")], output: "a", winnerVotes: 2 },
  { strategy: "majority", ballots: [ok("a"), ok("a"), ok("b"), ok("b")], code: "NO_MAJORITY" },
  { strategy: "majority", ballots: [ok("a"), ok("a"), no, no], code: "NO_MAJORITY" }, // failed slots count against
  { strategy: "majority", ballots: [ok("a"), ok("a"), ok("a"), no, no], output: "a" },
  { strategy: "majority", ballots: [no], code: "NO_VALID_OUTPUT" },
  { strategy: "unanimous", ballots: [ok({ x: 1, y: 2 }), ok({ y: 2, x: 1 })], output: { x: 1, y: 2 }, winnerVotes: 2 },
  { strategy: "unanimous", ballots: [ok("a"), ok("b")], code: "NOT_UNANIMOUS" },
  { strategy: "unanimous", ballots: [ok("a"), no], code: "NOT_UNANIMOUS" },
  { strategy: "weighted_consensus", ballots: [ok("a"), ok("b"), ok("b"), no], output: "b", winnerVotes: 2 },
  { strategy: "weighted_consensus", ballots: [no, ok("b"), ok("a"), ok("a"), ok("b")], output: "b" }, // tie → earliest first holder
  { strategy: "weighted_consensus", ballots: [no, no], code: "NO_VALID_OUTPUT" },
];

describe("resolveVotes", () => {
  it.each(table)(
    "$strategy over $ballots.length ballots → $output$code",
    ({ strategy, ballots, output, code, winnerVotes }) => {
      const r = resolveVotes(strategy, ballots);
      if (code !== undefined) {
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.code).toBe(code);
      } else {
        expect(r).toMatchObject({ ok: true, output });
        if (winnerVotes !== undefined) expect(r.tally.winnerVotes).toBe(winnerVotes);
      }
      expect(r.tally.total).toBe(ballots.length);
      expect(r.tally.valid + r.tally.failed).toBe(ballots.length);
    },
  );

  it("returns the earliest slot's value among equal outputs (key order of later slots never leaks)", () => {
    const r = resolveVotes("majority", [ok({ b: 1, a: 2 }), ok({ a: 2, b: 1 }), ok("z")]);
    expect(r.ok && Object.keys(r.output as object)).toEqual(["b", "a"]);
  });

  it.each([
    ["a number", 1, "1"],
    ["null", null, "null"],
    ["a boolean", true, "true"],
    ["an array", ["a"], '["a"]'],
  ])("keeps a string output apart from %s whose JSON text it spells", (_name, value, text) => {
    const r = resolveVotes("weighted_consensus", [ok(value), ok(text), ok(text)]);
    expect(r).toMatchObject({ ok: true, output: text, tally: { distinct: 2, winnerVotes: 2 } });
  });

  it("majority wins exactly when more than half of all slots agree", () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.constantFrom("a", "b", "c"), { nil: undefined }), { minLength: 1, maxLength: 12 }),
        (votes) => {
          const ballots = votes.map((v) => (v === undefined ? no : ok(v)));
          const best = Math.max(0, ...["a", "b", "c"].map((x) => votes.filter((v) => v === x).length));
          expect(resolveVotes("majority", ballots).ok).toBe(best * 2 > votes.length);
        },
      ),
    );
  });

  it("throws UnknownVotingStrategyError naming the known strategies for a strategy it does not know, never returning undefined", () => {
    for (const ballots of [[ok("a")], [no], []]) {
      expect(() => resolveVotes("best_of_n" as VotingStrategy, ballots)).toThrow(UnknownVotingStrategyError);
    }
    expect(() => resolveVotes("best_of_n" as VotingStrategy, [ok("a")])).toThrow(
      'unknown voting strategy "best_of_n"; use one of first_valid, majority, unanimous, weighted_consensus',
    );
  });
});
