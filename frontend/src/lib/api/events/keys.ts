/** Cache keys of the user's event endpoints and their delivery logs. */
export const eventKeys = {
  all: ['event-endpoints'] as const,
  list: () => [...eventKeys.all, 'list'] as const,
  deliveries: (id: number) => [...eventKeys.all, id, 'deliveries'] as const,
  choices: () => [...eventKeys.all, 'choices'] as const,
};
