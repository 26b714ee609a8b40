// Types for dynalite 4.0.0 (ships none): the in-process DynamoDB emulator used by local/emulators.ts.
declare module "dynalite" {
  import type { Server } from "node:http";

  type DynaliteOptions = {
    /** LevelDB directory; in memory when omitted. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
    verbose?: boolean;
    debug?: boolean;
    ssl?: boolean;
  };

  function dynalite(options?: DynaliteOptions): Server;
  export = dynalite;
}
