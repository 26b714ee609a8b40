// Thrown errors of the decision-integrity module: broken invariants and bad wiring, never business outcomes.
import { ClaimsError } from "../errors.ts";

/** Stable codes of the errors this module throws. */
type DirErrorCode =
  | "INVALID_MONEY"
  | "CURRENCY_MISMATCH"
  | "INVALID_PROPOSAL_INPUT"
  | "INVALID_KERNEL_INPUT"
  | "LEDGER_INVARIANT"
  | "INVALID_ORDER"
  | "INVALID_AUDIT_EVENT";

/** A money value that cannot be represented exactly in integer minor units of its currency. */
export class MoneyError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_MONEY", message, options);
  }
}

/** Two amounts of different currencies combined (added, compared): there is no FX anywhere money moves. */
export class CurrencyMismatchError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CURRENCY_MISMATCH", message, options);
  }
}

/** Inputs handed to a pure builder (proposal, registry) that a correct caller never produces. */
export class ProposalInputError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_PROPOSAL_INPUT", message, options);
  }
}

/** The kernel was wired wrongly (e.g. handed another order than the proposal names); not a business outcome. */
export class KernelInputError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_KERNEL_INPUT", message, options);
  }
}

/** A ledger entry that breaks its own invariants (refunded_cents ≠ sum of claims, non-integer cents). */
export class LedgerInvariantError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("LEDGER_INVARIANT", message, options);
  }
}

/** An order handed to the context store that is not a valid authoritative order. */
export class OrderDataError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_ORDER", message, options);
  }
}

/** An audit event that does not match the audit schema. */
export class AuditEventError extends ClaimsError<DirErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_AUDIT_EVENT", message, options);
  }
}
