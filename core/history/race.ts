// Rows of a scenario file that race (`race:`) are submitted at once: which of them wins is not determined, how
// many do is. One definition of how such a group matches and how it reads ("2 of 4 accepted"), used by the
// batch's console lines, its summary, its --json rows and the HTML report alike.

/** An outcome a row of a race ended with. */
export interface RaceActual {
  id: string;
  verdict: string;
  reason_code: string | null | undefined;
}

/** What a row of a race expects (a row without a reason code takes any code of its verdict). */
export interface RaceExpected {
  id: string;
  verdict: string;
  reason_code?: string | null | undefined;
}

/** A race matched as a group: its rows, whether their outcomes counted are the expected ones counted, and how it reads. */
export interface RaceGroup {
  race: string;
  ids: string[];
  matches: boolean;
  /** "2 of 4 accepted", and when the count differs, what was expected: "3 of 4 accepted (expected 2)". */
  outcome: string;
}

const outcomeKey = (verdict: string, code: string | null | undefined) => `${verdict} ${code ?? ""}`;

const VERDICT_WORDS: Record<string, string> = {
  ACCEPT: "accepted",
  ESCALATE: "escalated",
  REJECT: "rejected",
  NEEDS_REVIEW: "sent to review",
};

/** The verb a group's count is told with ("accepted" for ACCEPT), the verdict itself when it has none. */
function verdictWord(verdict: string): string {
  return VERDICT_WORDS[verdict] ?? verdict;
}

/**
 * Matches the rows of one race as a group: the outcomes its rows ended with, counted, against the ones they expect,
 * counted (exact expectations first, then verdict-only ones take what is left of their verdict). Rows of `actual`
 * not in `expected` are ignored; an expected row without an outcome counts as not matched.
 */
export function matchRace(race: string, expected: readonly RaceExpected[], actual: readonly RaceActual[]): RaceGroup {
  const ids = expected.map((e) => e.id);
  const ended = actual.filter((a) => ids.includes(a.id));
  const left = ended.map((a) => outcomeKey(a.verdict, a.reason_code));
  let matches = ended.length === expected.length;
  const ordered = [...expected].sort((a, b) => (a.reason_code ? 0 : 1) - (b.reason_code ? 0 : 1));
  for (const e of ordered) {
    const at = left.findIndex((k) =>
      e.reason_code ? k === outcomeKey(e.verdict, e.reason_code) : k.startsWith(`${e.verdict} `),
    );
    if (at < 0) matches = false;
    else left.splice(at, 1);
  }
  // The headline verdict: ACCEPT when the race expects any (how many are paid is what a race decides), else the first.
  const headline = expected.some((e) => e.verdict === "ACCEPT") ? "ACCEPT" : (expected[0]?.verdict ?? "ACCEPT");
  const got = ended.filter((a) => a.verdict === headline).length;
  const want = expected.filter((e) => e.verdict === headline).length;
  const outcome = `${got} of ${ids.length} ${verdictWord(headline)}${got === want ? "" : ` (expected ${want})`}`;
  return { race, ids, matches, outcome };
}

/**
 * Every race of a run matched as a group, in the order the races first appear in `scenarios`; scenarios without a
 * `race` are not in any group.
 */
export function matchRaces(
  scenarios: readonly (RaceExpected & { race?: string | undefined })[],
  actual: readonly RaceActual[],
): RaceGroup[] {
  const races = [...new Set(scenarios.flatMap((s) => (s.race ? [s.race] : [])))];
  return races.map((race) =>
    matchRace(
      race,
      scenarios.filter((s) => s.race === race),
      actual,
    ),
  );
}

/** "race customer-limit: 2 of 4 accepted ✓" — a race group as every surface prints it. */
export function raceText(group: Pick<RaceGroup, "race" | "outcome" | "matches">): string {
  return `race ${group.race}: ${group.outcome} ${group.matches ? "✓" : "✗"}`;
}
