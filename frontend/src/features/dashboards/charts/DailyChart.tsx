import type { ChartData, ChartOptions } from 'chart.js';
import { Chart } from 'react-chartjs-2';

import { ChartFigure } from '../../../components/ChartFigure';
import { seriesColour } from '../../../lib/chart';
import { formatBytes } from '../../../lib/format';
import type { Daily } from '../api/daily';

const TB = 1e12;

/** Daily bars for ingest and distribution (TB), with each direction's target as a line. */
export function DailyChart({ daily }: { daily: Daily }) {
  const labels = daily.days.map((day) => day.date.slice(5));
  const tb = (bytes: number) => bytes / TB;
  const data: ChartData<'bar' | 'line', number[], string> = {
    labels,
    datasets: [
      {
        type: 'bar',
        label: 'Ingest',
        data: daily.days.map((day) => tb(day.ingest)),
        backgroundColor: seriesColour(0),
      },
      {
        type: 'bar',
        label: 'Distribution',
        data: daily.days.map((day) => tb(day.distribution)),
        backgroundColor: seriesColour(1),
      },
      {
        type: 'line',
        label: 'Ingest target',
        data: daily.days.map(() => tb(daily.targets.ingest)),
        borderColor: seriesColour(0),
        borderDash: [6, 4],
        borderWidth: 2,
        pointRadius: 0,
      },
      {
        type: 'line',
        label: 'Distribution target',
        data: daily.days.map(() => tb(daily.targets.distribution)),
        borderColor: seriesColour(1),
        borderDash: [2, 3],
        borderWidth: 2,
        pointRadius: 0,
      },
    ],
  };
  const options: ChartOptions<'bar' | 'line'> = {
    responsive: true,
    interaction: { mode: 'index', intersect: false },
    scales: {
      y: { beginAtZero: true, title: { display: true, text: 'TB per day' } },
      x: { ticks: { maxRotation: 0, autoSkipPadding: 8 } },
    },
    plugins: {
      legend: { position: 'bottom' },
      tooltip: {
        callbacks: { label: (item) => `${item.dataset.label}: ${formatBytes(Number(item.raw) * TB)}` },
      },
    },
  };

  const totalIngest = daily.days.reduce((sum, day) => sum + day.ingest, 0);
  const totalOut = daily.days.reduce((sum, day) => sum + day.distribution, 0);
  const daysMet = daily.days.filter((day) => day.ingest >= daily.targets.ingest).length;
  const summary =
    `Over ${daily.days.length} days ${formatBytes(totalIngest)} ingested and ${formatBytes(totalOut)} ` +
    `distributed, against daily targets of ${formatBytes(daily.targets.ingest)} in and ` +
    `${formatBytes(daily.targets.distribution)} out; the ingest target was met on ${daysMet} ` +
    `${daysMet === 1 ? 'day' : 'days'}.`;

  return (
    <ChartFigure
      title={`Last ${daily.days.length} days`}
      summary={summary}
      table={{
        caption: 'Bytes per day',
        columns: ['Day (UTC)', 'Ingest', 'Distribution'],
        rows: daily.days.map((day) => [day.date, formatBytes(day.ingest), formatBytes(day.distribution)]),
      }}
    >
      <Chart type="bar" data={data} options={options} role="img" aria-label={summary} />
    </ChartFigure>
  );
}
