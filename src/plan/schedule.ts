import { findTool } from "../tools/registry.ts";
import type { Cell } from "./types.ts";

/**
 * Cells in the order they run: one at a time, except that consecutive cells of one measure and
 * repetition, in one deployment and one variant, whose tool runs its pairs in parallel (a
 * long-lived probe watched from several places at the same moment, like seed 000's three
 * clients) form one group. Not across variants: the two paths of a shared deployment are
 * measured one after the other, not over each other.
 * The runner follows these groups; estimates and Azure's worst case count each group once.
 */
export function scheduleGroups(cells: readonly Cell[]): Cell[][] {
  const groups: Cell[][] = [];
  for (const cell of cells) {
    const last = groups.at(-1);
    const head = last?.[0];
    if (head && findTool(cell.tool)?.pairsInParallel && head.measure === cell.measure && head.repetition === cell.repetition && head.deployment === cell.deployment && head.variant === cell.variant) {
      last.push(cell);
    } else groups.push([cell]);
  }
  return groups;
}

/** Time the cells take as scheduled: groups one after another, each as long as its longest cell. */
export function scheduledSeconds(cells: readonly Cell[], seconds: (cell: Cell) => number): number {
  return scheduleGroups(cells).reduce((sum, group) => sum + Math.max(...group.map(seconds)), 0);
}
