// Types of scripts/build-cli.mjs (plain JavaScript: it runs before anything is compiled).
/** The repository root. */
export declare const ROOT: string;
/** The compiled CLI's entry, dist/cli/main.js under `root`. */
export declare function entryOf(root?: string): string;
/** Why the build in `root`/dist cannot be run as it is; undefined when it is current. */
export declare function staleReason(root?: string): string | undefined;
/** Builds dist/ in `root`; returns the number of files compiled. */
export declare function buildCli(root?: string): Promise<number>;
