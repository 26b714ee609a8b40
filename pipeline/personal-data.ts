// The customer's own words in their own envelope (issue 38): the port every store of personal data seals through,
// and the audit's sealing and opening by it. Each claim's personal fields (core/privacy/sealing.ts) are sealed
// under a data key of the claim; erasing destroys the key, so every copy of the text — in the audit, a report,
// a backup — becomes unreadable at once, while the decision path stays in clear for replay and backtest.
import type { AuditEvent } from "../core/integrity/index.ts";
import { auditClaimId } from "../core/history/audit-events.ts";
import { openPersonalFields, sealPersonalFields } from "../core/privacy/sealing.ts";
import type { PersonalDataVault } from "./ports.ts";

export type { DestroyOutcome, PersonalDataVault } from "./ports.ts";
export { SealedFieldError, VaultUnavailableError } from "./errors.ts";

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
