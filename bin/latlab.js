#!/usr/bin/env node
// Entry point: checks Node, lets users' own experiment files `import … from "latlab"` wherever
// they live, loads TypeScript through tsx, then hands over to the CLI.
import { registerHooks } from "node:module";
import { pathToFileURL } from "node:url";

const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(`latlab needs Node.js >= 22; this is ${process.version}. Install it (for example: npm install -g node@24) and try again.`);
  process.exit(1);
}

const entry = new URL("../src/index.ts", import.meta.url).href;
registerHooks({
  resolve(specifier, context, next) {
    if (specifier !== "latlab") return next(specifier, context);
    try {
      return next(specifier, context);
    } catch {
      // A user's file outside any project that depends on latlab: use this copy.
      return { url: entry, shortCircuit: true, format: "module" };
    }
  },
});
const { register } = await import("tsx/esm/api");
register();
const { main } = await import(pathToFileURL(new URL("../src/cli/main.ts", import.meta.url).pathname).href);
process.exitCode = await main(process.argv.slice(2));
