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

/** A stretch of the run on one deployment: its schedule groups, run one after another. */
export interface RunStep {
  deployment: string;
  groups: Cell[][];
}

/**
 * The order the runner measures in, interleaved so that drift over the run (a noisy neighbour
 * arriving, the machine warming up) does not pass for a difference between variants: round by
 * round — repetition 0 of every replica of every variant, then repetition 1, … — and within a
 * round replica 0 of every variant, then replica 1 (A B A B …, not A A … B B …). Within one
 * deployment and round the plan's own order holds (measure by measure, the variants of a
 * shared deployment taking turns), and scheduleGroups' groups are kept whole. Consecutive
 * groups of one deployment form one step. Every target brings every deployment up at once, so
 * any order is possible; the runner keeps a deployment's connections open across its steps.
 */
export function runOrder(cells: readonly Cell[]): RunStep[] {
  const deploymentIndex = new Map<string, number>();
  for (const c of cells) if (!deploymentIndex.has(c.deployment)) deploymentIndex.set(c.deployment, deploymentIndex.size);
  const key = (g: Cell[]) => {
    const head = g[0]!;
    return [head.repetition, head.replica, deploymentIndex.get(head.deployment)!];
  };
  const ordered = scheduleGroups(cells)
    .map((group, index) => ({ group, index, key: key(group) }))
    .sort((a, b) => {
      for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
      return a.index - b.index;
    });
  const steps: RunStep[] = [];
  for (const { group } of ordered) {
    const last = steps.at(-1);
    if (last && last.deployment === group[0]!.deployment) last.groups.push(group);
    else steps.push({ deployment: group[0]!.deployment, groups: [group] });
  }
  return steps;
}
