/** Cache keys of the transfer figures (operators). */
export const metricKeys = {
  all: ['metrics'] as const,
  today: () => [...metricKeys.all, 'today'] as const,
  daily: (days: number) => [...metricKeys.all, 'daily', days] as const,
  throughput: (hours: number) => [...metricKeys.all, 'throughput', hours] as const,
  targets: () => [...metricKeys.all, 'targets'] as const,
};
