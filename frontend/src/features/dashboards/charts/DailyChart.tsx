import type { ChartData, ChartDataset, ChartOptions } from 'chart.js';
import { Chart } from 'react-chartjs-2';

import type { Daily } from '../../../lib/api/types';
import { ChartFigure } from '../../../components/ChartFigure';
import { seriesColour } from '../../../lib/chart';
import { byteUnit, formatBytes, formatPercent } from '../../../lib/format';

const TB = 1e12;
/** Below this share of the smaller target, bars drawn on the targets' scale would not show. */
const OFF_SCALE = 0.05;
const DIRECTIONS = [
  { key: 'ingest', name: 'Ingest', dash: [6, 4] },
  { key: 'distribution', name: 'Distribution', dash: [2, 3] },
] as const;

/**
 * Daily bars for ingest and distribution with each direction's target as a line, in TB. When
 * the busiest day is a sliver next to the targets (a new or demo archive), the bars get the unit
 * that suits them and the summary says the targets are off the scale, rather than drawing bars
 * no one can see.
 */
export function DailyChart({ daily }: { daily: Daily }) {
  const labels = daily.days.map((day) => day.date.slice(5));
  const busiest = Math.max(0, ...daily.days.flatMap((day) => [day.ingest, day.distribution]));
  const goals = [daily.targets.ingest, daily.targets.distribution].filter((t) => t > 0);
  const targetsShown =
    busiest === 0 || goals.length === 0 || busiest >= OFF_SCALE * Math.min(...goals);
  const unit = targetsShown ? { name: 'TB', size: TB } : byteUnit(busiest);
  const scaled = (bytes: number) => bytes / unit.size;
  const bars: ChartDataset<'bar' | 'line', number[]>[] = DIRECTIONS.map((d, index) => ({
    type: 'bar',
    label: d.name,
    data: daily.days.map((day) => scaled(day[d.key])),
    backgroundColor: seriesColour(index),
  }));
  const targetLines: ChartDataset<'bar' | 'line', number[]>[] = DIRECTIONS.map((d, index) => ({
    type: 'line',
    label: `${d.name} target`,
    data: daily.days.map(() => scaled(daily.targets[d.key])),
    borderColor: seriesColour(index),
    borderDash: [...d.dash],
    borderWidth: 2,
    pointRadius: 0,
  }));
  const data: ChartData<'bar' | 'line', number[], string> = {
    labels,
    datasets: targetsShown ? [...bars, ...targetLines] : bars,
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

  const totalIngest = daily.days.reduce((sum, day) => sum + day.ingest, 0);
  const totalOut = daily.days.reduce((sum, day) => sum + day.distribution, 0);
  const daysMet = daily.days.filter((day) => day.ingest >= daily.targets.ingest).length;
  const shareOf = (direction: (typeof DIRECTIONS)[number]['key']) => {
    const best = Math.max(0, ...daily.days.map((day) => day[direction]));
    const target = daily.targets[direction];
    return target > 0 ? formatPercent((100 * best) / target) : 'none';
  };
  const summary =
    `Over ${daily.days.length} days ${formatBytes(totalIngest)} ingested and ${formatBytes(totalOut)} ` +
    `distributed, against daily targets of ${formatBytes(daily.targets.ingest)} in and ` +
    `${formatBytes(daily.targets.distribution)} out; the ingest target was met on ${daysMet} ` +
    `${daysMet === 1 ? 'day' : 'days'}.` +
    (targetsShown
      ? ''
      : ` The targets are far above these bars and left off the scale: the best day reached ` +
        `${shareOf('ingest')} of the ingest target and ${shareOf('distribution')} of the ` +
        `distribution target.`);

  return (
    <ChartFigure
      title={`Last ${daily.days.length} days`}
      summary={summary}
      table={{
        caption: 'Bytes per day',
        columns: ['Day (UTC)', 'Ingest', 'Distribution'],
        rows: daily.days.map((day) => [
          day.date,
          formatBytes(day.ingest),
          formatBytes(day.distribution),
        ]),
      }}
    >
      <Chart type="bar" data={data} options={options} role="img" aria-label={summary} />
    </ChartFigure>
  );
}
