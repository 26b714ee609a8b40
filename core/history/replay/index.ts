// Replay of a recorded decision (docs/audit.md): `replayClaim` re-runs one claim's flow from its audit events and
// says whether every step reproduces. claim.ts follows the claim's path; each stage is replayed by the file named
// for it; events.ts says which events each stage records.
export { replayClaim } from "./claim.ts";
export type { ReplayResult } from "./context.ts";
export { replayMemo } from "./memo.ts";
export type { ReplayMemo } from "./memo.ts";
