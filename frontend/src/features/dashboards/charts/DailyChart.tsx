import type { ChartData, ChartDataset, ChartOptions } from 'chart.js';
import { Chart } from 'react-chartjs-2';

import type { ChartedDirection, Daily } from '../../../lib/api/types';
import { ChartFigure } from '../../../components/ChartFigure';
import { seriesColour } from '../../../lib/chart';
import { byteUnit, formatBytes, formatPercent } from '../../../lib/format';

/** Below this share of the target, bars drawn on the target's scale would not show. */
const OFF_SCALE = 0.05;
const DIRECTIONS: Record<ChartedDirection, { name: string; verb: string; colour: number }> = {
  ingest: { name: 'Ingest', verb: 'ingested', colour: 0 },
  distribution: { name: 'Distribution', verb: 'distributed', colour: 1 },
};

/**
 * One direction's daily bars against its own target line, on a scale of its own: with one
 * axis for both, a small ingest target beside a large distribution target hid the ingest bars.
 * When the busiest day is a sliver next to the target (a new archive), the bars get the unit
 * that suits them and the summary says the target is off the scale.
 */
export function DailyChart({ daily, direction }: { daily: Daily; direction: ChartedDirection }) {
  const { name, verb, colour } = DIRECTIONS[direction];
  const target = daily.targets[direction];
  const values = daily.days.map((day) => day[direction]);
  const busiest = Math.max(0, ...values);
  const targetShown = target > 0 && (busiest === 0 || busiest >= OFF_SCALE * target);
  const unit = byteUnit(targetShown ? Math.max(busiest, target) : busiest);
  const scaled = (bytes: number) => bytes / unit.size;
  const datasets: ChartDataset<'bar' | 'line', number[]>[] = [
    { type: 'bar', label: name, data: values.map(scaled), backgroundColor: seriesColour(colour) },
  ];
  if (targetShown) {
    datasets.push({
      type: 'line',
      label: 'Target',
      data: values.map(() => scaled(target)),
      borderColor: '#222',
      borderDash: [6, 4],
      borderWidth: 2,
      pointRadius: 0,
    });
  }
  const data: ChartData<'bar' | 'line', number[], string> = {
    labels: daily.days.map((day) => day.date.slice(5)),
    datasets,
  };
  const options: ChartOptions<'bar' | 'line'> = {
    responsive: true,
    interaction: { mode: 'index', intersect: false },
    scales: {
      y: { beginAtZero: true, title: { display: true, text: `${unit.name} per day` } },
      x: { ticks: { maxRotation: 0, autoSkipPadding: 8 } },
    },
    plugins: {
      legend: { position: 'bottom' },
      tooltip: {
        callbacks: {
          label: (item) => `${item.dataset.label}: ${formatBytes(Number(item.raw) * unit.size)}`,
        },
      },
    },
  };

  const total = values.reduce((sum, bytes) => sum + bytes, 0);
  const met = target > 0 ? values.filter((bytes) => bytes >= target).length : 0;
  const share = (bytes: number) => (target > 0 ? formatPercent((100 * bytes) / target) : '–');
  const summary =
    `${name}: ${formatBytes(total)} ${verb} over ${daily.days.length} days against a daily ` +
    `target of ${formatBytes(target)}; the target was met on ${met} ${met === 1 ? 'day' : 'days'}` +
    (target > 0 ? `, the best day reached ${share(busiest)} of it.` : '.') +
    (targetShown || target === 0 ? '' : ' The target is far above these bars and off the scale.');

  return (
    <ChartFigure
      title={`${name} per day`}
      summary={summary}
      table={{
        caption: `${name} per day`,
        columns: ['Day (UTC)', name, 'Of target'],
        rows: daily.days.map((day) => [
          day.date,
          formatBytes(day[direction]),
          share(day[direction]),
        ]),
      }}
    >
      <Chart type="bar" data={data} options={options} role="img" aria-label={summary} />
    </ChartFigure>
  );
}
