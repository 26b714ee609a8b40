// Voting: pick one output from a phase's slots. Pure; ballots are in graph declaration (slot)
// order, so the arrival order of answers never matters; outputs are compared by canonical JSON.

import { canonicalize } from "./canonical.ts";
import { UnknownVotingStrategyError } from "./errors.ts";
import type { VoteTally } from "./events.ts";
import type { JsonValue } from "./json.ts";
import { VotingStrategySchema } from "./schema.ts";
import type { VotingStrategy } from "./schema.ts";

const KNOWN: ReadonlySet<unknown> = new Set(VotingStrategySchema.options);

/** One slot's result: an output, or a failure (after any retry and fixer). */
export type Ballot = { ok: true; output: JsonValue } | { ok: false };

/** Why a vote produced no output. */
export type VoteFailureCode = "NO_VALID_OUTPUT" | "NO_MAJORITY" | "NOT_UNANIMOUS";

/** The result of a vote: an output, or a failure code with a reason a person can read. */
export type VoteResult =
  | { ok: true; output: JsonValue; tally: VoteTally }
  | { ok: false; code: VoteFailureCode; reason: string; tally: VoteTally };

/**
 * Picks one output from ballots given in slot order.
 * - `first_valid`: the first successful slot.
 * - `majority`: an output held by strictly more than half of *all* slots (failed slots count against it).
 * - `unanimous`: every slot succeeded with the same output.
 * - `weighted_consensus`: equal weights, so the most common output among successful slots;
 *   a tie goes to the output whose first holder comes earliest in slot order.
 * Among equal outputs the value of the earliest slot is returned. An unknown strategy throws
 * `UnknownVotingStrategyError` (whatever the ballots).
 */
export function resolveVotes(strategy: VotingStrategy, ballots: readonly Ballot[]): VoteResult {
  if (!KNOWN.has(strategy)) throw new UnknownVotingStrategyError(strategy, VotingStrategySchema.options);
  const total = ballots.length;
  let valid = 0;
  let firstValid = -1;
  // groups of equal outputs, in order of their first holder's slot; string outputs are grouped by
  // their value (canonical JSON of a string is one-to-one with it), so they are never re-serialised
  const groups: { output: JsonValue; votes: number }[] = [];
  const byKey = new Map<string, number>();
  const byString = new Map<string, number>();
  for (let i = 0; i < ballots.length; i++) {
    const b = ballots[i]!;
    if (!b.ok) continue;
    valid++;
    if (firstValid < 0) firstValid = i;
    const isString = typeof b.output === "string";
    const key = isString ? (b.output as string) : canonicalize(b.output);
    const index = isString ? byString : byKey;
    const g = index.get(key);
    if (g === undefined) {
      index.set(key, groups.length);
      groups.push({ output: b.output, votes: 1 });
    } else {
      groups[g]!.votes++;
    }
  }
  const failed = total - valid;
  let winner = groups[0];
  for (const g of groups) if (g.votes > winner!.votes) winner = g;
  const distinct = groups.length;

  if (valid === 0 || winner === undefined) {
    return {
      ok: false,
      code: "NO_VALID_OUTPUT",
      reason: `none of the ${total} slot${total === 1 ? "" : "s"} produced an output`,
      tally: { total, valid, failed, winnerVotes: 0, distinct },
    };
  }
  switch (strategy) {
    case "first_valid": {
      const first = groups[0]!; // the group of the first valid slot is the first group
      return { ok: true, output: first.output, tally: { total, valid, failed, winnerVotes: first.votes, distinct } };
    }
    case "majority":
      if (winner.votes * 2 > total)
        return {
          ok: true,
          output: winner.output,
          tally: { total, valid, failed, winnerVotes: winner.votes, distinct },
        };
      return {
        ok: false,
        code: "NO_MAJORITY",
        reason: `no output was given by more than half of the ${total} slots (best: ${winner.votes}, ${groups.length} distinct output${groups.length === 1 ? "" : "s"}, ${failed} failed)`,
        tally: { total, valid, failed, winnerVotes: winner.votes, distinct },
      };
    case "unanimous":
      if (failed === 0 && groups.length === 1)
        return {
          ok: true,
          output: winner.output,
          tally: { total, valid, failed, winnerVotes: winner.votes, distinct },
        };
      return {
        ok: false,
        code: "NOT_UNANIMOUS",
        reason:
          failed > 0
            ? `${failed} of ${total} slots failed, so the vote cannot be unanimous`
            : `the ${total} slots gave ${groups.length} different outputs`,
        tally: { total, valid, failed, winnerVotes: winner.votes, distinct },
      };
    case "weighted_consensus":
      return { ok: true, output: winner.output, tally: { total, valid, failed, winnerVotes: winner.votes, distinct } };
  }
}
