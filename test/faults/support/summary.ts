/** The figures of a run, filled by each phase and printed at the end (docs/reliability.md keeps the last run's). */
export const summary: Record<string, any> = {};
