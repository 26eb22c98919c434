// Module hooks that let a user's experiment file load under latlab, shared by bin/latlab.js (the
// main thread) and src/cli/experiments/loadProbe.worker.ts (the thread that probes a file first: hooks are
// per thread). Plain JavaScript, so that bin/latlab.js can import it before TypeScript loads.
//
// Only what every Node since 18 can link is used: registerHooks (Node 22.15 / 23.5) is read from
// the namespace, and bin/latlab.js has checked that it is there before calling this.
import * as nodeModule from "node:module";

/**
 * "latlab" in a user's experiment resolves to the copy running it (`entry`, under `ownRoot`) when
 * it would otherwise not resolve (a file outside any project that depends on latlab) or would
 * resolve into this copy anyway (a checkout's experiments/ refer to themselves: the package's
 * exports name dist/). Then TypeScript loads through tsx, under any Node from 22.15 on.
 */
export async function registerExperimentHooks(entry, ownRoot) {
  nodeModule.registerHooks({
    resolve(specifier, context, next) {
      if (specifier !== "latlab") return next(specifier, context);
      try {
        const resolved = next(specifier, context);
        if (!resolved.url.startsWith(ownRoot)) return resolved;
      } catch {
        // Not resolvable from there: this copy it is.
      }
      return { url: entry, shortCircuit: true, format: "module" };
    },
  });
  const { register } = await import("tsx/esm/api");
  register();
}
