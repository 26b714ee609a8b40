// Redaction before the model (docs/privacy.md, "What the model sees"): the emails, phone numbers, IBANs, card
// numbers, postal addresses and personal names in a claim's text replaced by typed placeholders — `[EMAIL_1]`,
// `[PHONE_1]`, `[IBAN_1]`, `[CARD_1]`, `[ADDRESS_1]`, `[NAME_1]` — numbered per type in order of first
// appearance, the same value always the same placeholder. Order ids, customer ids, amounts, dates and the words
// of the claim stay as written. Pure: patterns, check digits and word lists, no I/O.
import { ibanValid, luhnValid } from "./checksums.ts";
import { FIRST_NAMES, NOT_NAMES, STRONG_NAME_CUES, WEAK_NAME_CUES } from "./names.ts";

/** The kinds of personal data redacted, in the order they are looked for (an earlier kind wins an overlap). */
export const PERSONAL_DATA_TYPES = ["EMAIL", "IBAN", "CARD", "ADDRESS", "PHONE", "NAME"] as const;

/** One kind of personal data. */
export type PersonalDataType = (typeof PERSONAL_DATA_TYPES)[number];

/** Where a piece of personal data stands in a text: `text.slice(start, end)`. */
export interface PersonalDataSpan {
  readonly type: PersonalDataType;
  readonly start: number;
  readonly end: number;
}

type Found = { start: number; end: number };

const EMAIL_RE = /(?<![\p{L}\d._%+-])[\p{L}\d._%+-]+@[\p{L}\d-]+(?:\.[\p{L}\d-]+)*\.\p{L}{2,}/gu;

/** Ids the shop gives (`ord_100`, `cus_0100`, `sku_…`): never personal data, never touched. */
const ID_RE = /(?<![\w-])[a-z]{2,6}_[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?/gi;

function emails(text: string): Found[] {
  return [...text.matchAll(EMAIL_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

/**
 * The longest run of whole groups, starting at a group, that `valid` accepts. `groups` are the run's groups with
 * their positions; each start is tried in order, the longest window first.
 */
function groupWindows(
  groups: ReadonlyArray<{ text: string; start: number; end: number }>,
  valid: (joined: string) => boolean,
): Found[] {
  const out: Found[] = [];
  let i = 0;
  while (i < groups.length) {
    let hit: Found | undefined;
    for (let j = groups.length; j > i && !hit; j--) {
      const joined = groups
        .slice(i, j)
        .map((g) => g.text)
        .join("");
      if (valid(joined)) hit = { start: groups[i]!.start, end: groups[j - 1]!.end };
      if (hit) i = j;
    }
    if (!hit) i++;
    else out.push(hit);
  }
  return out;
}

function groupsOf(run: string, offset: number, sep: RegExp): Array<{ text: string; start: number; end: number }> {
  return [...run.matchAll(sep)].map((g) => ({
    text: g[0],
    start: offset + g.index,
    end: offset + g.index + g[0].length,
  }));
}

/** IBANs: two letters, two check digits and the account, grouped in fours or not, passing the mod-97 check. */
function ibans(text: string): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(/(?<![\p{L}\d])[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]{1,4}){2,8}(?![\p{L}\d])/gu))
    out.push(...groupWindows(groupsOf(m[0], m.index, /[A-Za-z0-9]+/g), ibanValid));
  return out;
}

/** Card numbers: 14 to 19 digits (13 would take EAN-13 barcodes; 13-digit Visa cards are no longer issued) (groups apart by spaces or dashes), a card network's first digit, the Luhn check. */
function cards(text: string): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(/(?<![\w.,])\d+(?:[ -]\d+)*(?![\w]|[.,]\d)/g)) {
    // The account digits of an IBAN whose check digits fail are not a card number.
    if (/[A-Za-z]{2}\d{2}[ ]$/.test(text.slice(Math.max(0, m.index - 5), m.index))) continue;
    const groups = groupsOf(m[0], m.index, /\d+/g);
    out.push(...groupWindows(groups, (d) => d.length >= 14 && d.length <= 19 && /^[2-6]/.test(d) && luhnValid(d)));
  }
  return out;
}

const CAP = String.raw`\p{Lu}[\p{L}'’.-]*`;
const POSTCODE_CITY = String.raw`(?:,?\s+(?:[A-Z]{1,2}-)?\d{4,5}\s+\p{Lu}[\p{L}-]+(?:[ -](?:am |an der |im |sur |de |del )?\p{Lu}[\p{L}-]+)?)`;
const UK_US_TAIL = String.raw`(?:,[ \t]*\p{Lu}\p{Ll}[\p{L}'-]*(?:[ \t]\p{Lu}\p{Ll}[\p{L}'-]*)?)?(?:,?\s*(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]{2}\s\d{5}(?:-\d{4})?)(?![\w]))?`;

/** Postal addresses: a street with its number (the forms of the four languages), and the postcode and city after it. */
const ADDRESS_RES: readonly RegExp[] = [
  // German: Hauptstraße 12, Berliner Str. 5a, Am Weiher 3 — then 10115 Berlin.
  new RegExp(
    String.raw`(?<![\p{L}])(?:${CAP}[ \t])?\p{L}*(?:straße|strasse|Straße|Strasse|str\.|Str\.|weg|Weg|gasse|Gasse|platz|Platz|allee|Allee|ring|Ring|damm|Damm|ufer|Ufer|chaussee)[ \t]+\d{1,4}[ \t]?[a-z]?(?![\p{L}\d])${POSTCODE_CITY}?`,
    "gu",
  ),
  // English: 221B Baker Street, Flat 2, London NW1 6XE; 1600 Pennsylvania Ave, Washington, DC 20500.
  new RegExp(
    String.raw`(?<![\p{L}\d])(?:(?:Flat|Apt\.?|Apartment|Unit|Suite)[ \t]*\w+,?[ \t]+)?\d{1,5}[A-Za-z]?\s+(?:\p{Lu}[\p{L}'-]+\s+){1,3}(?:Street|St\.?|Road|Rd\.?|Avenue|Ave\.?|Lane|Ln\.?|Drive|Boulevard|Blvd\.?|Way|Court|Close|Crescent|Terrace|Square|Gardens|Row)(?![\p{L}])(?:,?\s+(?:Apt|Flat|Unit|Suite)\.?\s*\w+)?${UK_US_TAIL}`,
    "gu",
  ),
  // French: 12 rue de la Paix, 75002 Paris; 3 bis avenue Victor Hugo.
  new RegExp(
    String.raw`(?<![\p{L}\d])\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|Rue|avenue|Avenue|av\.|Av\.|boulevard|Boulevard|bd|Bd|place|Place|allée|Allée|chemin|Chemin|impasse|Impasse|quai|Quai|route|Route|cours|Cours)\s+(?:(?:de la|de l'|de l’|des|du|de|d'|d’)\s*)?\p{Lu}[\p{L}'’-]+(?:\s+(?:(?:de la|des|du|de|la|le)\s+)?\p{Lu}[\p{L}'’-]+){0,3}${POSTCODE_CITY}?`,
    "gu",
  ),
  // Spanish: Calle Mayor 5, 3º B, 28013 Madrid; Avda. de la Constitución, nº 12.
  new RegExp(
    String.raw`(?<![\p{L}])(?:calle|Calle|C/|avenida|Avenida|Avda\.?|Av\.|plaza|Plaza|Pza\.|paseo|Paseo|camino|Camino|ronda|Ronda|carrer|Carrer|travesía|Travesía)\s*(?:(?:de la|de los|de las|del|de)\s+)?\p{Lu}[\p{L}-]+(?:\s+(?:(?:de la|de los|del|de|y)\s+)?\p{Lu}[\p{L}-]+){0,3},?\s*(?:n[º°o]\.?\s*)?\d{1,4}(?:\s*,?\s*\d{1,2}\s?[º°]\s?[A-Za-z]?(?![\p{L}]))?${POSTCODE_CITY}?`,
    "gu",
  ),
  // Any language: a capitalised street and its number right before a postcode and city (Rua Augusta 5, 1100-053 Lisboa).
  new RegExp(
    String.raw`(?<![\p{L}])\p{Lu}[\p{L}.-]+(?:[ \t]\p{Lu}[\p{L}.-]+){0,3}[ \t]\d{1,4}[a-z]?,\s+(?:[A-Z]{1,2}-)?\d{4,5}(?:-\d{3})?\s+\p{Lu}[\p{L}-]+`,
    "gu",
  ),
];

function addresses(text: string): Found[] {
  return ADDRESS_RES.flatMap((re) =>
    [...text.matchAll(re)].map((m) => ({ start: m.index, end: m.index + m[0].length })),
  );
}

const PHONE_CUE =
  /(?:phone|mobile|cell|call|ring|tel|telephone|whatsapp|sms|text me|reach me|telefon|handy|mobil|rückruf|anrufen|rufen|erreichbar|téléphone|portable|joindre|appelez|appeler|rappeler|teléfono|telefono|móvil|movil|llamar|llámame|llamen|llame|escríbanme|escribidme|contacto|whatsapp)\b[^\n\d+]{0,25}$/i;
const DATE_SHAPE = /^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$/;
const AMOUNT_SHAPE = /^\d{1,3}(?:[.,]\d{3})*(?:[.,]\d{1,2})?$/;

/**
 * Phone numbers: an international one (`+49 …`, `0049 …`) of 8 to 15 digits; a national one starting with 0 of 9 to
 * 13 digits; the grouped national forms without a 0 (`612 345 678`, `(555) 123-4567`); any other run of 9 to 13
 * digits only where the text just said phone, mobile, Telefon, portable, teléfono… A date or an amount is never one.
 */
function phones(text: string): Found[] {
  const out: Found[] = [];
  const re = /(?<![\w+.,/-])(?:\+|00)?(?:\(0\)\s?)?\(?\d{1,5}\)?(?:[ ./-]{0,2}\(?\d{1,5}\)?){0,6}(?![\w]|[.,]\d)/g;
  for (const m of text.matchAll(re)) {
    // A closing parenthesis belongs to the number only when it opened one.
    const s = m[0].endsWith(")") && !m[0].includes("(") ? m[0].slice(0, -1) : m[0];
    const digits = s.replace(/\D/g, "");
    if (DATE_SHAPE.test(s) || AMOUNT_SHAPE.test(s)) continue;
    const cue = PHONE_CUE.test(text.slice(Math.max(0, m.index - 40), m.index));
    const ok = /^(?:\+|00[1-9])/.test(s)
      ? digits.length >= 8 && digits.length <= 15
      : /^\(?0/.test(s)
        ? digits.length >= 9 && digits.length <= 13 && (cue || !/^\d+$/.test(s) || digits.length <= 11)
        : /^(?:[6-9]\d{2} \d{3} \d{3}|[89]\d \d{3} \d{2} \d{2}|[6-9]\d{2} \d{2} \d{2} \d{2}|\(\d{3}\) ?\d{3}-\d{4}|\d{3}-\d{3}-\d{4})$/.test(
            s,
          ) ||
          (cue && digits.length >= 9 && digits.length <= 13);
    if (ok) out.push({ start: m.index, end: m.index + s.length });
  }
  return out;
}

// A name's word: Anna, Jean-Pierre, O'Brien, McAllister, Müller-Lüdenscheidt.
const NAME_WORD = String.raw`(?:\p{Lu}['’])?\p{Lu}\p{Ll}+(?:\p{Lu}\p{Ll}+)?(?:[-'’]\p{Lu}?\p{Ll}+)*`;
const NAME_RE = new RegExp(
  String.raw`${NAME_WORD}(?:[ \t]+(?:(?:de la|de las|de los|del|de|van der|van|von der|von|der|da|di|du|le|la|y)[ \t]+)?${NAME_WORD}){0,3}`,
  "uy",
);
const cueRe = (cues: readonly string[]) =>
  new RegExp(
    String.raw`(?<![\p{L}])(?:${[...cues]
      .sort((a, b) => b.length - a.length)
      .map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("|")})(?![\p{L}])[ \t]*[\n,:]?[ \t\n]*`,
    "giu",
  );
const STRONG_RE = cueRe(STRONG_NAME_CUES);
const WEAK_RE = cueRe(WEAK_NAME_CUES);
const NAMES = String.raw`${NAME_WORD}(?:[ \t]+${NAME_WORD}){0,2}`;
const SIGNATURE_RE = new RegExp(
  String.raw`(?<![\p{L}])${NAMES}(?=,?[ \t]*[<(]?[\p{L}\d._%+-]+@|[ \t]+here\b)|(?<=(?:^|\n|[.!?][ \t]+)[—–-][ \t]*)${NAMES}(?=[ \t]*$)`,
  "gu",
);
const BARE_NAME_RE = new RegExp(String.raw`(?<![\p{L}])${NAME_WORD}[ \t]+${NAME_WORD}(?:[ \t]+${NAME_WORD})?`, "gu");

/** The name starting at `at`, up to a word that is never a name; undefined when there is none. */
function nameAt(text: string, at: number): Found | undefined {
  NAME_RE.lastIndex = at;
  const m = NAME_RE.exec(text);
  if (!m) return undefined;
  let end = at;
  for (const w of m[0].matchAll(/\S+/g)) {
    if (NOT_NAMES.has(w[0].toLowerCase())) break;
    if (/^\p{Lu}/u.test(w[0])) end = at + w.index + w[0].length;
  }
  return end === at ? undefined : { start: at, end };
}

/**
 * Personal names: the capitalised words after a cue that introduces a name (`my name is`, `Frau`, `Cordialement,`,
 * `Atentamente,` …), after a weaker one (`I am`, `ich bin`, `je suis`, `soy`) when the first is a known first name,
 * and a known first name followed by a capitalised word anywhere.
 */
function names(text: string): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(STRONG_RE)) {
    const n = nameAt(text, m.index + m[0].length);
    if (n) out.push(n);
  }
  for (const m of text.matchAll(WEAK_RE)) {
    const n = nameAt(text, m.index + m[0].length);
    if (
      n &&
      FIRST_NAMES.has(
        text
          .slice(n.start, n.end)
          .split(/[ \t-]/)[0]!
          .toLowerCase(),
      )
    )
      out.push(n);
  }
  for (const m of text.matchAll(BARE_NAME_RE)) {
    const first = m[0].split(/[ \t]/)[0]!.toLowerCase();
    if (!FIRST_NAMES.has(first)) continue;
    const n = nameAt(text, m.index);
    if (n && n.end > n.start + first.length) out.push(n);
  }
  // A signature: capitalised words right before an email (`Tariq Fletcher, tariq@…`), `X here`, or `— X` ending the text.
  for (const m of text.matchAll(SIGNATURE_RE)) {
    const n = nameAt(text, m.index);
    // One word alone (`Mail a@b.de`, `— Thanks`) is a name only when it is a known first name.
    const one = n !== undefined && !/\s/.test(text.slice(n.start, n.end));
    if (n && (!one || FIRST_NAMES.has(text.slice(n.start, n.end).toLowerCase()))) out.push(n);
  }
  return out;
}

const FINDERS: Record<PersonalDataType, (text: string) => Found[]> = {
  EMAIL: emails,
  IBAN: ibans,
  CARD: cards,
  ADDRESS: addresses,
  PHONE: phones,
  NAME: names,
};

const overlaps = (a: Found, b: Found) => a.start < b.end && b.start < a.end;

/** The personal data in `text`, in order, none overlapping another and none overlapping a shop id. */
export function findPersonalData(text: string): PersonalDataSpan[] {
  const ids = [...text.matchAll(ID_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const taken: PersonalDataSpan[] = [];
  for (const type of PERSONAL_DATA_TYPES) {
    const found = FINDERS[type](text).sort((a, b) => a.start - b.start || b.end - a.end);
    for (const f of found) {
      if (taken.some((t) => overlaps(t, f))) continue;
      if (type !== "EMAIL" && ids.some((i) => overlaps(i, f))) continue;
      taken.push({ type, start: f.start, end: f.end });
    }
  }
  return taken.sort((a, b) => a.start - b.start);
}

/** The same value written two ways (spaces, case) is the same placeholder. */
function valueKey(type: PersonalDataType, value: string): string {
  const v = value.toLowerCase();
  return `${type}:${type === "PHONE" || type === "CARD" || type === "IBAN" ? v.replace(/[^a-z0-9]/g, "") : v.replace(/\s+/g, " ")}`;
}

/** Redacts one claim's texts with one numbering: the same email in the reason and in the category is one placeholder. */
export interface Redactor {
  /** `text` with each piece of personal data replaced by its placeholder. */
  text(text: string): string;
}

/** A redactor whose placeholders are numbered across every text it is given. */
export function createRedactor(): Redactor {
  const placeholders = new Map<string, string>();
  const counts = new Map<PersonalDataType, number>();
  return {
    text(text: string): string {
      let out = "";
      let at = 0;
      for (const span of findPersonalData(text)) {
        const key = valueKey(span.type, text.slice(span.start, span.end));
        let placeholder = placeholders.get(key);
        if (placeholder === undefined) {
          const n = (counts.get(span.type) ?? 0) + 1;
          counts.set(span.type, n);
          placeholder = `[${span.type}_${n}]`;
          placeholders.set(key, placeholder);
        }
        out += text.slice(at, span.start) + placeholder;
        at = span.end;
      }
      return out + text.slice(at);
    },
  };
}

/** `text` with its personal data replaced by typed placeholders (`[EMAIL_1]`, `[PHONE_1]`, …). */
export function redactPersonalData(text: string): string {
  return createRedactor().text(text);
}
