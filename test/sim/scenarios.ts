/**
 * Named scenarios: the races docs/chaos.md records, each as a plan that aims the faults
 * at the moment the race needs; the seed still draws everything else.
 */
import { type Plan, planRun } from './plan.ts';

export const scenarios: Record<string, (seed: number) => Plan> = {};
