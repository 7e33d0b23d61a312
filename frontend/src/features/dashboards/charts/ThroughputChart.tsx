import type { ChartData, ChartDataset, ChartOptions } from 'chart.js';
import { Line } from 'react-chartjs-2';

import { ChartFigure } from '../../../components/ChartFigure';
import { seriesColour } from '../../../lib/chart';
import { formatNumber } from '../../../lib/format';

/** "14:00" for an hour start; the day too when the series spans midnight. */
export function hourLabel(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const hh = String(date.getUTCHours()).padStart(2, '0');
  return hh === '00'
    ? `${date.getUTCDate()} ${date.toLocaleString('en', { month: 'short', timeZone: 'UTC' })}`
    : `${hh}:00`;
}

/** A series with at most this many busy hours gets a dot on each, or a lone busy hour would be
 * only a line rising at the chart's edge. */
const SPARSE_HOURS = 6;

/** Below this share of the target rate, lines drawn on the target's scale would not show. */
const OFF_SCALE = 0.05;

/**
 * MB/s per hour, one line per series (direction or collection). With a `target` (the daily
 * target as a mean rate), a dashed line shows it, unless the busiest hour is a sliver of it
 * (then the summary says it is off the scale): one chart per direction keeps each readable
 * against its own target.
 */
export function ThroughputChart({
  title,
  hours,
  series,
  what,
  target,
  colourOffset = 0,
}: {
  title: string;
  hours: string[];
  series: Record<string, number[]>;
  /** "direction" or "collection", for the summary. */
  what: string;
  /** MB/s the daily target needs on average. */
  target?: number;
  /** The first series' colour, so a direction keeps its colour across charts. */
  colourOffset?: number;
}) {
  const names = Object.keys(series);
  const busiest = Math.max(0, ...names.flatMap((name) => series[name] ?? []));
  const targetShown =
    target !== undefined && target > 0 && (busiest === 0 || busiest >= OFF_SCALE * target);
  const lines: ChartDataset<'line', number[]>[] = names.map((name, i) => {
    const index = i + colourOffset;
    const values = series[name] ?? [];
    const sparse = values.filter((v) => v > 0).length <= SPARSE_HOURS;
    return {
      label: name,
      data: values,
      borderColor: seriesColour(index),
      backgroundColor: seriesColour(index),
      borderWidth: 2,
      pointRadius: values.map((v) => (sparse && v > 0 ? 3 : 0)),
      pointHoverRadius: 4,
      tension: 0.2,
    };
  });
  if (targetShown) {
    lines.push({
      label: 'Target',
      data: hours.map(() => target ?? 0),
      borderColor: '#222',
      borderDash: [6, 4],
      borderWidth: 2,
      pointRadius: 0,
    });
  }
  const data: ChartData<'line', number[], string> = {
    labels: hours.map(hourLabel),
    datasets: lines,
  };
  const options: ChartOptions<'line'> = {
    responsive: true,
    interaction: { mode: 'index', intersect: false },
    scales: {
      y: { beginAtZero: true, title: { display: true, text: 'MB/s' } },
      x: { ticks: { maxRotation: 0, autoSkipPadding: 12 } },
    },
    plugins: {
      legend: { position: 'bottom' },
      tooltip: {
        callbacks: {
          label: (item) => `${item.dataset.label}: ${formatNumber(Number(item.raw))} MB/s`,
        },
      },
    },
  };

  const peaks = names.map((name) => ({ name, peak: Math.max(0, ...(series[name] ?? [])) }));
  const busy = peaks.filter((p) => p.peak > 0);
  const summary =
    names.length === 0
      ? `No transfers by ${what} in the last ${hours.length} hours.`
      : busy.length === 0
        ? `No bytes moved in the last ${hours.length} hours.` + targetSentence(target, targetShown)
        : `Peak hourly rate in the last ${hours.length} hours by ${what}: ` +
          busy.map((p) => `${p.name} ${formatNumber(p.peak)} MB/s`).join(', ') +
          '.' +
          targetSentence(target, targetShown);

  const rows = hours
    .map((hour, i) => [
      hour.slice(5, 16).replace('T', ' '),
      ...names.map((name) => formatNumber(series[name]?.[i] ?? 0)),
    ])
    .filter((row) => row.slice(1).some((cell) => cell !== '0'));

  return (
    <ChartFigure
      title={title}
      summary={summary}
      table={{
        caption: `MB/s per hour by ${what} (UTC; hours with transfers only)`,
        columns: ['Hour (UTC)', ...names],
        rows,
      }}
    >
      {names.length ? (
        <Line data={data} options={options} role="img" aria-label={summary} />
      ) : (
        <p className="chart-figure__empty">Nothing to chart yet.</p>
      )}
    </ChartFigure>
  );
}

function targetSentence(target: number | undefined, shown: boolean): string {
  if (target === undefined || target <= 0) return '';
  const rate = `${formatNumber(target)} MB/s`;
  return shown
    ? ` The daily target needs ${rate} on average.`
    : ` The daily target needs ${rate} on average, far above these lines and off the scale.`;
}
