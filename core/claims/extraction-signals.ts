// Signs that customer text tries to instruct the system rather than describe a claim.

const INSTRUCTION_PATTERNS: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\b[^.!?\n]{0,40}\b(?:instructions?|prompts?|rules?|polic(?:y|ies)|limits?|guidelines?)\b/i,
  /\bsystem\s*prompt\b/i,
  /\byou are now\b/i,
  /\b(?:new|updated)\s+instructions?\b/i,
  /\bact as\b/i,
  /\bdeveloper mode\b/i,
  /\bjailbreak\b/i,
  /<\/?\s*(?:system|assistant|user|customer_claim|analyst_assessment|instructions?)\b/i,
  /\b(?:approve|accept)\b[^.!?\n]{0,30}\b(?:without|regardless|no matter)\b/i,
  /\brefund\b[^.!?\n]{0,40}\bregardless\b/i,
  /\bset (?:the )?(?:amount|confidence|action)\b/i,
];

/** Whether text contains instruction-like content (prompt injection attempts), which must be treated as data. */
export function containsInstructionLikeText(text: string): boolean {
  return INSTRUCTION_PATTERNS.some((re) => re.test(text));
}

/** The note the extractor appends to a claim's reason when the text held instructions, so the crew sees it. */
export const INSTRUCTION_NOTE = "Note: the customer text also contained instructions addressed to the system; they were ignored.";
