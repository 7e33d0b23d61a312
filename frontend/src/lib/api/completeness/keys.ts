/** Cache keys of the completeness reports. */
export const completenessKeys = {
  all: ['completeness'] as const,
  day: (collection: string, day: string) =>
    [...completenessKeys.all, 'day', collection, day] as const,
  worst: (days: number) => [...completenessKeys.all, 'worst', days] as const,
};
