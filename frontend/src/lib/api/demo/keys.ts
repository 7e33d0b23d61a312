/** Cache keys of what the demo says about itself (operators). */
export const demoKeys = {
  all: ['demo'] as const,
  syntheticHistory: () => [...demoKeys.all, 'synthetic-history'] as const,
};
