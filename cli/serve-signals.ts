// How the long-running commands meet SIGINT and SIGTERM sent to their own PID (Ctrl-C, systemd, pm2): a batch
// ends early with its partial audit and report, a server stops cleanly; a second signal exits at once.

/** The exit code of a process ended by `signal` (128 + its number), as shells report it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === "SIGTERM" ? 143 : 130;
}

/** Signals listened for, and what a second one does: exit at once with the signal's code, saying so. */
function listen(onFirst: (signal: NodeJS.Signals) => void, say: (text: string) => void): () => void {
  let seen = false;
  const handler = (signal: NodeJS.Signals) => {
    if (seen) {
      say(`${signal} again: exiting now, without waiting for the stop to finish.`);
      process.exit(signalExitCode(signal));
    }
    seen = true;
    onFirst(signal);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/**
 * `claims serve`: settles with the first SIGINT or SIGTERM, however early it comes (the server stops once it is
 * up); the listeners stay, so a second signal exits at once.
 */
export function stopOnSignals(say: (text: string) => void = (t) => process.stderr.write(`${t}\n`)) {
  return new Promise<NodeJS.Signals>((done) => {
    listen(done, say);
  });
}

/**
 * `claims batch`: the first SIGINT or SIGTERM aborts `signal` (no further row starts; the run ends with its
 * partial audit and report); a second one exits at once. `dispose` removes the listeners once the run ended.
 */
export function interruptOnSignals(say: (text: string) => void): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const dispose = listen((signal) => {
    say(
      `\n${signal}: interrupted. No further claim starts; writing the partial audit and report (${signal} again exits now)…`,
    );
    controller.abort();
  }, say);
  return { signal: controller.signal, dispose };
}
