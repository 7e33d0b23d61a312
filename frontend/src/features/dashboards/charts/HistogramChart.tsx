import type { ChartData, ChartOptions } from 'chart.js';
import { Bar } from 'react-chartjs-2';

import { ChartFigure } from '../../../components/ChartFigure';
import { seriesColour } from '../../../lib/chart';

/** Ten bins of 10 % each; 100 % goes into the last. */
export function percentBins(values: number[]): number[] {
  const bins = Array.from({ length: 10 }, () => 0);
  for (const value of values) {
    const index = Math.min(9, Math.max(0, Math.floor(value / 10)));
    bins[index] = (bins[index] ?? 0) + 1;
  }
  return bins;
}

export const BIN_LABELS = Array.from({ length: 10 }, (_, i) => `${i * 10}–${i * 10 + 10} %`);

/** How full the volumes are: a histogram of % full. */
export function HistogramChart({ title, values }: { title: string; values: number[] }) {
  const bins = percentBins(values);
  const data: ChartData<'bar', number[], string> = {
    labels: BIN_LABELS,
    datasets: [{ label: 'Volumes', data: bins, backgroundColor: seriesColour(0) }],
  };
  const options: ChartOptions<'bar'> = {
    responsive: true,
    scales: {
      y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Volumes' } },
      x: {
        title: { display: true, text: '% full' },
        ticks: { maxRotation: 0, autoSkipPadding: 4 },
      },
    },
    plugins: { legend: { display: false } },
  };
  const nonEmpty = BIN_LABELS.map((label, i) => ({ label, n: bins[i] ?? 0 })).filter(
    (b) => b.n > 0,
  );
  const summary = values.length
    ? `${values.length} volumes: ` + nonEmpty.map((b) => `${b.n} at ${b.label}`).join(', ') + '.'
    : 'No volumes.';
  return (
    <ChartFigure
      title={title}
      summary={summary}
      table={{
        caption: 'Volumes per 10 % band of fullness',
        columns: ['% full', 'Volumes'],
        rows: BIN_LABELS.map((label, i) => [label, bins[i] ?? 0]),
      }}
    >
      <Bar data={data} options={options} role="img" aria-label={summary} />
    </ChartFigure>
  );
}
