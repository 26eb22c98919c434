import type { ResolvedHost } from "../dsl/placement.ts";
import type { PathKind } from "./types.ts";

/** How traffic between two hosts travels, from where they are placed. */
export function pathKind(a: ResolvedHost, b: ResolvedHost): PathKind {
  if (a.region !== b.region) return "cross-region";
  if (a.ppg !== null && a.ppg === b.ppg) return "same-ppg";
  if (a.zone !== null && b.zone !== null) return a.zone === b.zone ? "same-zone" : "cross-zone";
  return "same-region";
}
