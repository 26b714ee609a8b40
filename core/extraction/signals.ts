// Signs that customer text tries to instruct the system rather than describe a claim: instruction
// phrasing in English, German, French, Spanish (and a little Italian and Portuguese), chat-template
// tokens ([INST], <|im_start|>, <start_of_turn>…), hidden characters (zero-width, bidi controls,
// Unicode tag characters) and instructions hidden in base64. The text is normalised first (NFKC,
// accents and hidden characters removed, look-alike Cyrillic/Greek letters mapped to Latin), so
// "ig\u200Bnore previous instructions" and "іgnore" (Cyrillic і) are caught too.

/** What was found, by kind; `found` is true when any signal fired. */
interface InstructionScan {
  readonly found: boolean;
  /** Short names of the signals, e.g. `instruction phrasing`, `chat template token`, `base64-encoded instructions`. */
  readonly signals: readonly string[];
}

const FLAGS = "iu";
const rx = (source: string) => new RegExp(source, FLAGS);

/** Phrasing that addresses the system (matched on normalised, accent-free text). */
const PHRASES: ReadonlyArray<{ readonly lang: string; readonly re: RegExp }> = [
  // English
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:ignore|disregard|forget|override|bypass|circumvent|neglect)\b[^.!?\n]{0,40}\b(?:instructions?|prompts?|rules?|polic(?:y|ies)|limits?|guidelines?|guardrails?|restrictions?|validations?|verifications?|checks?|constraints?|directives?|programming)\b`,
    ),
  },
  {
    lang: "en",
    re: rx(String.raw`\bskip(?:ping)?\s+(?:the\s+|all\s+|any\s+)?(?:validation|verification|checks?|review|kernel)\b`),
  },
  { lang: "en", re: rx(String.raw`\bsystem\s*(?:prompt|message|instructions?|override)\b`) },
  { lang: "en", re: rx(String.raw`\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+(?:you|act|respond|answer)\b`) },
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:new|updated|revised|real)\s+instructions?\s*(?::|for you|follow|are)\b|\bfollow\s+(?:these|the following|my)\s+(?:new\s+)?instructions\b`,
    ),
  },
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+were\s+|though\s+you\s+were\s+)?(?:an?\s+|the\s+)?(?:admin(?:istrator)?|system|developer|root|supervisor|manager|refund\s+(?:bot|agent)|unrestricted|jailbroken|dan)\b|\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b`,
    ),
  },
  {
    lang: "en",
    re: rx(String.raw`\b(?:developer|admin|god|debug|maintenance|sudo)\s+mode\b|\bjailbreak|\bdo\s+anything\s+now\b`),
  },
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:approve|accept|authori[sz]e|grant|issue|process)\b[^.!?\n]{0,40}\b(?:without|regardless|no matter)\b`,
    ),
  },
  { lang: "en", re: rx(String.raw`\brefund\b[^.!?\n]{0,40}\bregardless\b`) },
  {
    lang: "en",
    re: rx(
      String.raw`\bset\s+(?:the\s+|your\s+)?(?:amount|confidence|action|verdict|decision)\b|\bconfidence\s*(?:of|to|=|:)?\s*(?:1(?:\.0+)?|100\s*%)(?![\d.])`,
    ),
  },
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:reveal|print|show|repeat|output)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+)?(?:prompt|instructions)\b`,
    ),
  },
  {
    lang: "en",
    re: rx(
      String.raw`\b(?:respond|reply|answer|output)\s+(?:only\s+)?with\s+(?:the\s+following|this|exactly\s+this)\s+(?:json|text|output)\b`,
    ),
  },
  { lang: "en", re: rx(String.raw`\bend\s+of\s+(?:the\s+)?(?:customer|user)\s+(?:text|message|input|data|claim)\b`) },
  // German (ü → u, ä → a, ö → o after accents are removed)
  {
    lang: "de",
    re: rx(
      String.raw`\b(?:ignorier\w*|vergiss|vergessen\s+sie|missacht\w*|uberspring\w*|umgeh\w*|hinwegsetz\w*)\b[^.!?\n]{0,50}\b(?:anweisung\w*|instruktion\w*|regel\w*|richtlinie\w*|vorgabe\w*|prufung\w*|validierung\w*|beschrankung\w*|limit\w*|befehl\w*)`,
    ),
  },
  { lang: "de", re: rx(String.raw`\b(?:du\s+bist|sie\s+sind|ihr\s+seid)\s+(?:jetzt|nun|ab\s+sofort)\b`) },
  {
    lang: "de",
    re: rx(
      String.raw`\bneue\s+(?:anweisung|instruktion|regel)\w*\s*(?::|fur\s+dich|befolgen)|\bsystem(?:anweisung|prompt|nachricht|befehl)\w*\b`,
    ),
  },
  {
    lang: "de",
    re: rx(
      String.raw`\b(?:ohne|unabhangig\s+von)\b[^.!?\n]{0,20}\b(?:prufung|validierung|kontrolle|regeln|richtlinien)\b[^.!?\n]{0,40}\b(?:genehmig|erstatt|bewillig|freigeb)\w*|\b(?:genehmig|erstatt|bewillig|freigeb)\w*\b[^.!?\n]{0,40}\b(?:ohne\s+(?:prufung|validierung|kontrolle)|unabhangig\s+von\s+(?:regeln|richtlinien))`,
    ),
  },
  {
    lang: "de",
    re: rx(
      String.raw`\b(?:entwickler|admin|administrator)-?modus\b|\b(?:tu|tue|tun\s+sie)\s+so\s+als\b|\bverhalte\s+dich\s+(?:wie|als)\b`,
    ),
  },
  // French
  {
    lang: "fr",
    re: rx(
      String.raw`\b(?:ignore[rz]?|oublie[rz]?|neglige[rz]?|contourne[rz]?|outrepasse[rz]?|passe[rz]?\s+outre)\b[^.!?\n]{0,50}\b(?:instructions?|consignes?|regles?|directives?|politiques?|limites?|verifications?|validations?|controles?)\b`,
    ),
  },
  {
    lang: "fr",
    re: rx(
      String.raw`\b(?:tu\s+es|vous\s+etes)\s+(?:maintenant|desormais|a\s+present)\b|\bdesormais,?\s+(?:tu|vous)\s+(?:es|etes|dois|devez)\b`,
    ),
  },
  {
    lang: "fr",
    re: rx(
      String.raw`\bnouvelles?\s+(?:instructions?|consignes?)\s*(?::|pour\s+(?:toi|vous)|a\s+suivre)|\b(?:invite|prompt|message|instructions?)\s+(?:du\s+)?systeme\b`,
    ),
  },
  {
    lang: "fr",
    re: rx(
      String.raw`\b(?:approuve[rz]?|accepte[rz]?|valide[rz]?|rembourse[rz]?)\b[^.!?\n]{0,40}\bsans\s+(?:aucune?\s+)?(?:verification|controle|validation|examen)\b`,
    ),
  },
  { lang: "fr", re: rx(String.raw`\bmode\s+(?:developpeur|administrateur|admin)\b|\bfai(?:s|tes)\s+comme\s+si\b`) },
  // Spanish
  {
    lang: "es",
    re: rx(
      String.raw`\b(?:ignora[rd]?|ignore[n]?|olvida[rd]?|olvide[n]?|omite|omitir|salta(?:te)?|saltar|pasa\s+por\s+alto|haz\s+caso\s+omiso\s+(?:de|a))\b[^.!?\n]{0,50}\b(?:instrucciones|indicaciones|reglas|normas|politicas?|limites|validacion(?:es)?|verificacion(?:es)?|controles|directrices)\b`,
    ),
  },
  {
    lang: "es",
    re: rx(String.raw`\b(?:ahora\s+eres|ahora\s+es\s+usted|a\s+partir\s+de\s+ahora\s+(?:eres|debes|vas))\b`),
  },
  {
    lang: "es",
    re: rx(
      String.raw`\bnuevas\s+instrucciones\s*(?::|para\s+ti|a\s+seguir)|\b(?:prompt|mensaje|instrucciones?|indicaciones)\s+del\s+sistema\b`,
    ),
  },
  {
    lang: "es",
    re: rx(
      String.raw`\b(?:aprueba|acepta|autoriza|reembolsa|aprobar)\b[^.!?\n]{0,40}\bsin\s+(?:ninguna\s+)?(?:verificacion|validacion|control|revision)\b`,
    ),
  },
  { lang: "es", re: rx(String.raw`\bmodo\s+(?:desarrollador|administrador|admin)\b|\bfinge\s+(?:ser|que)\b`) },
  // Italian, Portuguese
  { lang: "it", re: rx(String.raw`\b(?:ignora|dimentica)\b[^.!?\n]{0,40}\b(?:istruzioni|regole)\b|\bora\s+sei\b`) },
  {
    lang: "pt",
    re: rx(String.raw`\b(?:ignore|ignora|esqueca)\b[^.!?\n]{0,40}\b(?:instrucoes|regras)\b|\bagora\s+voce\s+e\b`),
  },
];

/** Chat-template and role markers of common model families, and the prompt's own tags. */
const TEMPLATE_TOKENS: readonly RegExp[] = [
  /<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\s*\|>/i,
  /\[\/?INST\]|<<\/?SYS>>/i,
  /<\/?\s*(?:start_of_turn|end_of_turn)\s*>/i,
  /<\/?\s*(?:system|assistant|user|customer_claim|analyst_assessment|step_error|instructions?)\b[^>]{0,20}>/i,
  /(?:^|[\n.!?:;]\s*|<\/[^>]*>\s*)(?:system|assistant|developer)\s*:/i,
  /(?:^|\n)\s*#{2,}\s*(?:system|instruction|instructions|assistant|response)\b/i,
];

/** Zero-width and joiner characters, bidi controls, Unicode tags, soft hyphen and other invisible formatting. */
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]/gu;
const ZERO_WIDTH_IN_WORD = /\p{L}[\u200B-\u200D\u2060\uFEFF]+\p{L}/u;
const BIDI_OR_TAG = /[\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]/u;

/** Cyrillic and Greek letters that look like Latin ones. */
const LOOKALIKES: Readonly<Record<string, string>> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  у: "y",
  х: "x",
  і: "i",
  ј: "j",
  ѕ: "s",
  к: "k",
  м: "m",
  т: "t",
  н: "h",
  в: "b",
  А: "A",
  Е: "E",
  О: "O",
  Р: "P",
  С: "C",
  У: "Y",
  Х: "X",
  І: "I",
  Ј: "J",
  Ѕ: "S",
  К: "K",
  М: "M",
  Т: "T",
  Н: "H",
  В: "B",
  α: "a",
  ε: "e",
  ι: "i",
  ο: "o",
  ρ: "p",
  υ: "u",
  κ: "k",
  ν: "v",
  τ: "t",
  Α: "A",
  Ε: "E",
  Ι: "I",
  Ο: "O",
  Ρ: "P",
  Κ: "K",
  Ν: "N",
  Τ: "T",
  Χ: "X",
  Υ: "Y",
};

/** The text as the patterns see it: NFKC, Unicode tag characters decoded to ASCII, invisible characters removed, look-alikes mapped, accents dropped. */
export function normalizeForScan(text: string): string {
  const tagsDecoded = text.replace(/[\u{E0020}-\u{E007E}]/gu, (c) =>
    String.fromCodePoint((c.codePointAt(0) ?? 0xe0020) - 0xe0000),
  );
  const visible = tagsDecoded.normalize("NFKC").replace(INVISIBLE, "");
  const latin = [...visible].map((c) => LOOKALIKES[c] ?? c).join("");
  return latin.normalize("NFD").replace(/\p{M}+/gu, "");
}

function phrasing(normalized: string): string | undefined {
  for (const p of PHRASES) if (p.re.test(normalized)) return `instruction phrasing (${p.lang})`;
  for (const re of TEMPLATE_TOKENS) if (re.test(normalized)) return "chat template or role token";
  return undefined;
}

const BASE64_RE = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/_-])/g;

/** Decodes base64 (or base64url) to text, or undefined when it is not mostly printable text. */
function decodeBase64Text(token: string): string | undefined {
  const std = token.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (std.length % 4 === 1) return undefined;
  let binary: string;
  try {
    binary = atob(std.padEnd(std.length + ((4 - (std.length % 4)) % 4), "="));
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const printable = [...decoded].filter((c) => /[\p{L}\p{N}\p{P}\p{Zs}\n\r\t<>|[\]=+$^`~]/u.test(c)).length;
  return decoded.length >= 8 && printable / [...decoded].length >= 0.9 ? decoded : undefined;
}

/** Scans customer text for attempts to instruct the system; every signal found is named. */
export function scanForInstructions(text: string): InstructionScan {
  const signals: string[] = [];
  const normalized = normalizeForScan(text);
  const found = phrasing(normalized);
  if (found !== undefined) signals.push(found);
  if (ZERO_WIDTH_IN_WORD.test(text)) signals.push("zero-width characters inside words");
  if (BIDI_OR_TAG.test(text)) signals.push("hidden bidi-control or Unicode tag characters");
  for (const m of text.matchAll(BASE64_RE)) {
    const decoded = decodeBase64Text(m[0]);
    if (decoded !== undefined && phrasing(normalizeForScan(decoded)) !== undefined) {
      signals.push("base64-encoded instructions");
      break;
    }
  }
  return { found: signals.length > 0, signals };
}

/** Whether text contains instruction-like content (prompt injection attempts), which must be treated as data. */
export function containsInstructionLikeText(text: string): boolean {
  return scanForInstructions(text).found;
}

/** The note the extractor appends to a claim's reason when the text held instructions, so the crew sees it. */
export const INSTRUCTION_NOTE =
  "Note: the customer text also contained instructions addressed to the system; they were ignored.";
