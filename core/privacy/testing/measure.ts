// Recall and precision of the redaction on a labelled set, per type and language (docs/privacy.md).
import { findPersonalData, PERSONAL_DATA_TYPES, type PersonalDataType } from "../redact.ts";
import type { Language, LabelledText } from "./labelled-set.ts";

/** One type's counts: labelled spans found whole (`found` of `labelled`), spans redacted as it (`right` of `redacted`). */
export interface Tally {
  labelled: number;
  found: number;
  redacted: number;
  right: number;
}

export interface Measurement {
  /** By type, then by language and `all`. */
  readonly byType: Record<PersonalDataType, Record<Language | "all", Tally>>;
  /** Hard negatives (order ids, amounts, dates, tracking numbers, SKUs) that reached the model as written. */
  readonly kept: { readonly total: number; readonly intact: number; readonly damaged: readonly string[] };
  /** Labelled personal data missed, as `id type "value"` (for the test's message; never logged in production). */
  readonly missed: readonly string[];
  /** Redactions of something not labelled as that type, as `id type "value"`. */
  readonly wrong: readonly string[];
}

const empty = (): Tally => ({ labelled: 0, found: 0, redacted: 0, right: 0 });

/** Measures the redactor on `set`: a labelled span counts as found only when redactions of its type cover all of it. */
export function measureRedaction(set: readonly LabelledText[]): Measurement {
  const byType = Object.fromEntries(
    PERSONAL_DATA_TYPES.map((t) => [t, { en: empty(), de: empty(), fr: empty(), es: empty(), all: empty() }]),
  ) as Measurement["byType"];
  const missed: string[] = [];
  const wrong: string[] = [];
  const damaged: string[] = [];
  let keptTotal = 0;
  for (const item of set) {
    const predicted = findPersonalData(item.text);
    for (const gold of item.spans) {
      const value = JSON.stringify(item.text.slice(gold.start, gold.end));
      if (gold.type === "KEEP") {
        keptTotal++;
        if (predicted.some((p) => p.start < gold.end && gold.start < p.end)) damaged.push(`${item.id} ${value}`);
        continue;
      }
      const covered = (i: number) => predicted.some((p) => p.type === gold.type && p.start <= i && i < p.end);
      let whole = true;
      for (let i = gold.start; i < gold.end && whole; i++) if (!/\s/.test(item.text[i]!) && !covered(i)) whole = false;
      for (const t of [byType[gold.type][item.lang], byType[gold.type].all]) {
        t.labelled++;
        if (whole) t.found++;
      }
      if (!whole) missed.push(`${item.id} ${gold.type} ${value}`);
    }
    for (const p of predicted) {
      const right = item.spans.some((g) => g.type === p.type && g.start < p.end && p.start < g.end);
      for (const t of [byType[p.type][item.lang], byType[p.type].all]) {
        t.redacted++;
        if (right) t.right++;
      }
      if (!right) wrong.push(`${item.id} ${p.type} ${JSON.stringify(item.text.slice(p.start, p.end))}`);
    }
  }
  return { byType, kept: { total: keptTotal, intact: keptTotal - damaged.length, damaged }, missed, wrong };
}

const pct = (n: number, d: number) => (d === 0 ? "–" : `${((100 * n) / d).toFixed(1)} %`);

/** The measurement as a markdown table: recall and precision per type, per language and over all. */
export function redactionTable(m: Measurement): string {
  const langs: Array<Language | "all"> = ["en", "de", "fr", "es", "all"];
  const rows = PERSONAL_DATA_TYPES.map((type) => {
    const cells = langs.map((l) => {
      const t = m.byType[type][l];
      return `${pct(t.found, t.labelled)} / ${pct(t.right, t.redacted)}`;
    });
    return `| ${type} | ${m.byType[type].all.labelled} | ${cells.join(" | ")} |`;
  });
  return [
    "| type | labelled | en recall / precision | de | fr | es | all |",
    "| --- | ---: | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `Hard negatives kept as written: ${m.kept.intact} of ${m.kept.total} (${pct(m.kept.intact, m.kept.total)}).`,
  ].join("\n");
}
