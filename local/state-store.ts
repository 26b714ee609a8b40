// Reading what `claims serve` keeps in its state directory: through the running server's table endpoint
// (signed with the credentials it wrote, `keys`) when one holds the directory, else by opening the LevelDB files in this process (holding the lock
// meanwhile, so a `claims serve` started at the same time waits for nothing and fails clearly instead).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createDynamoPorts } from "../adapters/aws/index.ts";
import type { DynamoPorts } from "../adapters/aws/index.ts";
import type { SigningKeys } from "./auth/sigv4.ts";
import type { PersonalDataVault } from "../pipeline/ports.ts";
import { createLocalAwsClients } from "./local-clients.ts";
import { localClientConfig, startTableEmulator } from "./emulators.ts";
import { LocalStackError } from "./errors.ts";
import { LOCAL_TABLE_NAME } from "./stack.ts";
import { lockStateDir, stateHolder } from "./state-lock.ts";

/** The stored claims, audit and reviews of a state directory, and how to let go of them. */
export type StateStore = {
  readonly ports: Pick<DynamoPorts, "claims" | "audit" | "reviews">;
  /** "the running claims serve (pid …)" or "the files in …": where the answers come from. */
  readonly source: string;
  close(): Promise<void>;
};

/** Whether `stateDir` holds a table kept by `claims serve`. */
function hasStateStore(stateDir: string): boolean {
  return existsSync(join(stateDir, "dynamodb", "CURRENT"));
}

/** Opens the store of `stateDir` (see above), its personal fields opened with `personalData`; undefined when the directory holds none. */
export async function openStateStore(
  stateDir: string,
  keys?: SigningKeys,
  personalData?: PersonalDataVault,
): Promise<StateStore | undefined> {
  if (!hasStateStore(stateDir)) return undefined;
  const holder = stateHolder(stateDir);
  let endpoint: string;
  let stop = async () => {};
  let source: string;
  if (holder) {
    if (!holder.dynamodb)
      throw new LocalStackError(
        "STATE_DIR_BUSY",
        `${stateDir} is held by ${holder.command} (pid ${holder.pid}), which is still starting: try again in a moment`,
      );
    endpoint = holder.dynamodb;
    source = `the running ${holder.command} (pid ${holder.pid})`;
  } else {
    const lock = lockStateDir(stateDir, "claims (reading the store)");
    try {
      const table = await startTableEmulator(stateDir);
      endpoint = table.endpoint;
      stop = async () => {
        await table.stop();
        lock.release();
      };
    } catch (error) {
      lock.release();
      throw error;
    }
    source = `the files in ${stateDir}`;
  }
  const clients = createLocalAwsClients({
    dynamodb: localClientConfig(endpoint, keys),
    ...(personalData ? { personalData } : {}),
  });
  const ports = createDynamoPorts({ client: clients.dynamo, tableName: LOCAL_TABLE_NAME });
  return {
    ports,
    source,
    async close() {
      for (const client of [clients.dynamo, clients.sqs, clients.events]) client.destroy();
      await stop();
    },
  };
}
