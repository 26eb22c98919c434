import { readFileSync } from "node:fs";

/** latlab's own version, from package.json, recorded in every results file. */
export const LATLAB_VERSION: string = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
