// Lazily built ports: a port is created on first use, so building the dependencies of a function
// never reads a link (or a secret) that the function does not use.

/** Memoises `make`; a throw is not memoised, so a later call can succeed. */
export function once<T>(make: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = make();
      done = true;
    }
    return value;
  };
}

/** An object that stands for `make()`: every property read builds the real one once and forwards to it. */
export function lazyPort<T extends object>(make: () => T): T {
  const real = once(make);
  return new Proxy({} as T, {
    get(_target, prop) {
      const target = real();
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    has: (_target, prop) => Reflect.has(real(), prop),
    // Spreading, JSON.stringify and structuredClone see the real object's own properties.
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor(_target, prop) {
      const d = Reflect.getOwnPropertyDescriptor(real(), prop);
      return d ? { ...d, configurable: true } : undefined;
    },
  });
}
