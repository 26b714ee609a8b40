// The checkpoint port: where a shell keeps session snapshots between events, with an optimistic
// version check so that two consumers racing on one crew cannot both win.

import { VersionConflictError } from "../errors.ts";
import type { CrewSnapshot } from "./snapshot.ts";

/** A stored snapshot and its version (1 for the first save). */
export type StoredCheckpoint = { snapshot: CrewSnapshot; version: number };

/** Snapshot storage with optimistic concurrency; implementations translate their own conflicts into `VersionConflictError`. */
export interface CheckpointStore {
  /** The latest snapshot of a crew, or undefined if none was saved. */
  load(crewId: string): Promise<StoredCheckpoint | undefined>;
  /** Saves if the stored version is `expectedVersion` (0 when nothing is stored yet); resolves to the new version, else rejects with `VersionConflictError`. */
  save(crewId: string, snapshot: CrewSnapshot, expectedVersion: number): Promise<{ version: number }>;
}

/** A checkpoint store in process memory; it keeps snapshots as JSON text, so what you load is never aliased to what you saved. */
export function createInMemoryCheckpointStore(): CheckpointStore & { size(): number } {
  const rows = new Map<string, { json: string; version: number }>();
  return {
    async load(crewId) {
      const row = rows.get(crewId);
      return row === undefined ? undefined : { snapshot: JSON.parse(row.json) as CrewSnapshot, version: row.version };
    },
    async save(crewId, snapshot, expectedVersion) {
      const actual = rows.get(crewId)?.version ?? 0;
      if (actual !== expectedVersion)
        throw new VersionConflictError("checkpoint of crew", crewId, expectedVersion, { actualVersion: actual });
      const version = actual + 1;
      rows.set(crewId, { json: JSON.stringify(snapshot), version });
      return { version };
    },
    size() {
      return rows.size;
    },
  };
}
