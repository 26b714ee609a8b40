// Which test files `npm run test:quick` runs (vitest.config.ts, project `quick`): units and contracts that need
// no browser, no local stack, no emulator, no SST or bundler and no child process — told from each file's own
// imports and calls (and those of the test support it imports: *.test-kit.ts, testing/), so a new test lands in the
// right tier without a list to keep. Everything else is slow: project `slow-shared` where the file and its test support
// leave the process's environment, directory and module registry alone (its workers are shared between files, as the
// quick tier's are), project `slow` (a fresh process per file) for the others; `npm test` runs all three.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/**
 * What needs a process of the file's own: a test that assigns process.env, changes directory or mocks a module would
 * leak it into the next file of a shared worker (vitest.config.ts: the `quick` and `slow-shared` projects).
 */
export const OWN_PROCESS_MARK: { why: string; calls: RegExp } = {
  why: "it changes the process's environment or module registry",
  calls:
    /process\.env(?:\.\w+|\[[^\]]+\])\s*=(?!=)|delete process\.env|process\.chdir\(|vi\.(?:mock|doMock|stubGlobal)\(/,
};

/** What puts a test file out of the quick tier: its name, a module it imports, or a call it makes. */
export const SLOW_MARKS: readonly { why: string; name?: RegExp; imports?: RegExp; calls?: RegExp }[] = [
  { why: "an end-to-end test (its name)", name: /\.e2e\.test\.ts$/ },
  { why: "a browser", imports: /playwright|browser/, calls: /chromium/ },
  {
    why: "the local stack",
    imports: /local\/(stack|runtime|stack-runtime|handler-thread|http-front)\.ts$|stack-fixture/,
  },
  {
    why: "an emulator",
    imports:
      /emulators\.ts$|dynalite|fauxqs|testing\/moto|contract-dynamo|account-standin|eventbridge\/server\.ts$|sqs-emulator/,
  },
  { why: "a child process", imports: /serve-child|node:child_process/ },
  { why: "SST or a bundler", imports: /sst-recorder|esbuild|build-cli/ },
  // The quick tier runs without isolation (vitest.config.ts): its files share each worker's modules and process.
  OWN_PROCESS_MARK,
];

const SPECIFIER = /(?:from\s+|import\s*\(\s*)"([^"]+)"/g;

/** The modules `text` imports (static and literal dynamic imports), as written. */
export function importsOf(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** Why the test file `path` (its text read by `read`) is not a quick test; undefined when it is one. */
export function slowBecause(
  path: string,
  read: (file: string) => string | undefined = readIfThere,
): string | undefined {
  const byName = SLOW_MARKS.find((m) => m.name?.test(path));
  if (byName) return byName.why;
  for (const { file, text } of withSupport(path, read)) {
    const specifiers = importsOf(text);
    const hit = SLOW_MARKS.find((m) => m.calls?.test(text) || specifiers.some((s) => m.imports?.test(s)));
    if (hit) return `${hit.why}${file === normalize(path) ? "" : ` (through ${file})`}`;
  }
  return undefined;
}

/**
 * Why the test file `path` needs a process of its own (OWN_PROCESS_MARK, in the file or the test support it reaches);
 * undefined when it can share a worker with other files.
 */
export function ownProcessBecause(
  path: string,
  read: (file: string) => string | undefined = readIfThere,
): string | undefined {
  for (const { file, text } of withSupport(path, read))
    if (OWN_PROCESS_MARK.calls.test(text))
      return `${OWN_PROCESS_MARK.why}${file === normalize(path) ? "" : ` (through ${file})`}`;
  return undefined;
}

/** The test file `path` and the test support it reaches (*.test-kit.ts, testing/), each with its text, the file first. */
function* withSupport(path: string, read: (file: string) => string | undefined) {
  const seen = new Set<string>();
  const queue = [normalize(path)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = read(file);
    if (text === undefined) continue;
    yield { file, text };
    for (const s of importsOf(text))
      if (s.startsWith(".") && /\.test-kit\.ts$|\/testing\//.test(s)) queue.push(normalize(join(dirname(file), s)));
  }
}

function readIfThere(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** Every *.test.ts under the working directory (relative paths), outside node_modules, dist and dot-folders. */
export function testFiles(dir = "."): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = dir === "." ? e.name : join(dir, e.name);
    if (e.isDirectory())
      return e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".") ? [] : testFiles(path);
    return e.name.endsWith(".test.ts") ? [path] : [];
  });
}
