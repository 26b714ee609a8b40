// The customer's own words in their own envelope (issue 38): the port every store of personal data seals through,
// and the audit's sealing and opening by it. Each claim's personal fields (core/privacy/sealing.ts) are sealed
// under a data key of the claim; erasing destroys the key, so every copy of the text — in the audit, a report,
// a backup — becomes unreadable at once, while the decision path stays in clear for replay and backtest.
import type { AuditEvent } from "../core/integrity/index.ts";
import { auditClaimId } from "../core/history/audit-events.ts";
import { openPersonalFields, sealPersonalFields } from "../core/privacy/sealing.ts";
import { ClaimsError } from "../core/errors.ts";

/** What destroying a subject's key found: a key it destroyed, a key destroyed before, or no key at all. */
export type DestroyOutcome = "destroyed" | "already_erased" | "unknown";

/** Where personal data is sealed: one data key per subject (a claim), AES-256-GCM (adapters/vault/). */
export interface PersonalDataVault {
  /** `plaintext` sealed under `subject`'s key (made on first use); ERASED once the subject's key was destroyed. */
  seal(subject: string, plaintext: string): Promise<string>;
  /** The text of a sealed field, or undefined when its key was destroyed. */
  open(token: string): Promise<string | undefined>;
  /** Destroys `subject`'s key for good: whatever was sealed under it can never be opened again, nor sealed anew. */
  destroy(subject: string): Promise<DestroyOutcome>;
}

/** A sealed field that cannot be read: not a token, or its ciphertext does not match its key (corrupt data). */
export class SealedFieldError extends ClaimsError<"SEALED_FIELD_INVALID"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("SEALED_FIELD_INVALID", message, options);
  }
}

/** The vault's key store failed (a file that cannot be written, KMS refusing): broken infrastructure. */
export class VaultUnavailableError extends ClaimsError<"VAULT_UNAVAILABLE"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("VAULT_UNAVAILABLE", message, options);
  }
}

/** `event` with its personal fields sealed under its claim's key (events of no claim hold no personal data). */
export async function sealAuditEvent(event: AuditEvent, vault: PersonalDataVault): Promise<AuditEvent> {
  const claimId = auditClaimId(event);
  if (claimId === undefined) return event;
  return { ...event, details: await sealPersonalFields(event.details, (t) => vault.seal(claimId, t)) };
}

/** `event` with its sealed fields opened; an erased claim's read ERASED. */
export async function openAuditEvent(event: AuditEvent, vault: PersonalDataVault): Promise<AuditEvent> {
  return { ...event, details: await openPersonalFields(event.details, (t) => vault.open(t)) };
}

/** Every event sealed, in order. */
export async function sealAuditEvents(events: readonly AuditEvent[], vault: PersonalDataVault): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  for (const e of events) out.push(await sealAuditEvent(e, vault));
  return out;
}

/** Every event opened, in order. */
export async function openAuditEvents(events: readonly AuditEvent[], vault: PersonalDataVault): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  for (const e of events) out.push(await openAuditEvent(e, vault));
  return out;
}
