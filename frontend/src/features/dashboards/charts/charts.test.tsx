import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { Chart } from '../../../lib/chart';
import { DailyChart } from './DailyChart';
import { HistogramChart, percentBins } from './HistogramChart';
import { ThroughputChart } from './ThroughputChart';

function chartOf(canvas: HTMLElement) {
  const chart = Chart.getChart(canvas as HTMLCanvasElement);
  if (!chart) throw new Error('no Chart.js instance on the canvas');
  return chart;
}

describe('DailyChart', () => {
  const daily = {
    targets: { ingest: 1e12, distribution: 2e12 },
    days: [
      { date: '2026-11-21', ingest: 5e11, distribution: 0 },
      { date: '2026-11-22', ingest: 1.5e12, distribution: 2.5e12 },
    ],
  };

  it("draws one direction's bars per day and its own target as a line", () => {
    render(<DailyChart daily={daily} direction="distribution" />);

    const canvas = screen.getByRole('img');
    expect(canvas.tagName).toBe('CANVAS');
    const chart = chartOf(canvas);
    expect(chart.data.labels).toEqual(['11-21', '11-22']);
    const [bars, target] = chart.data.datasets;
    expect(bars?.label).toBe('Distribution');
    expect(bars?.data).toEqual([0, 2.5]);
    expect(target?.label).toBe('Target');
    expect(target?.data).toEqual([2, 2]);
    expect(chart.options.scales?.y).toMatchObject({ title: { text: 'TB per day' } });
  });

  it('keeps a small target readable beside a large one: each direction has its scale', () => {
    const lopsided = {
      targets: { ingest: 0.05e12, distribution: 50e12 },
      days: [
        { date: '2026-11-21', ingest: 40e9, distribution: 48e12 },
        { date: '2026-11-22', ingest: 60e9, distribution: 52e12 },
      ],
    };
    render(<DailyChart daily={lopsided} direction="ingest" />);

    const chart = chartOf(screen.getByRole('img'));
    // 40 and 60 GB against a 50 GB target, in GB: not slivers under a 50 TB axis
    expect(chart.data.datasets[0]?.data).toEqual([40, 60]);
    expect(chart.data.datasets[1]?.data).toEqual([50, 50]);
    expect(chart.options.scales?.y).toMatchObject({ title: { text: 'GB per day' } });
  });

  it('gives bars far below the target their own unit and says the target is off the scale', () => {
    render(
      <DailyChart
        daily={{
          targets: { ingest: 1e12, distribution: 2e12 },
          days: [
            { date: '2026-11-21', ingest: 0, distribution: 0 },
            { date: '2026-11-22', ingest: 40.6e6, distribution: 13.1e6 },
          ],
        }}
        direction="ingest"
      />,
    );

    const chart = chartOf(screen.getByRole('img'));
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['Ingest']);
    expect(chart.data.datasets[0]?.data).toEqual([0, 40.6]);
    expect(chart.options.scales?.y).toMatchObject({ title: { text: 'MB per day' } });
    expect(screen.getByRole('img')).toHaveAccessibleName(
      'Ingest: 40.6 MB ingested over 2 days against a daily target of 1.00 TB; the target was ' +
        'met on 0 days, the best day reached 0.0041 % of it. The target is far above these bars ' +
        'and off the scale.',
    );
  });

  it('says the same in words and in a table', async () => {
    render(<DailyChart daily={daily} direction="ingest" />);

    const summary =
      'Ingest: 2.00 TB ingested over 2 days against a daily target of 1.00 TB; the target was met ' +
      'on 1 day, the best day reached 150 % of it.';
    expect(screen.getByRole('img')).toHaveAccessibleName(summary);
    expect(screen.getByText(summary)).toBeInTheDocument();

    await userEvent.click(screen.getByText('Show the numbers'));
    const row = screen.getByRole('row', { name: /2026-11-22/ });
    expect(
      within(row)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['1.50 TB', '150 %']);
  });
});

describe('ThroughputChart', () => {
  const hours = ['2026-11-22T00:00:00+00:00', '2026-11-22T01:00:00+00:00'];

  it('draws one line per series and names the peaks', () => {
    render(
      <ThroughputChart
        title="MB/s by direction"
        hours={hours}
        series={{ ingest: [0, 0], migrate: [0, 0.0244] }}
        what="direction"
      />,
    );

    const chart = chartOf(screen.getByRole('img'));
    expect(chart.data.labels).toEqual(['22 Nov', '01:00']);
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['ingest', 'migrate']);
    expect(chart.data.datasets[1]?.data).toEqual([0, 0.0244]);
    // a lone busy hour gets a dot, not only a line rising at the edge
    expect(chart.data.datasets[1]).toMatchObject({ pointRadius: [0, 3] });
    expect(screen.getByRole('img')).toHaveAccessibleName(
      'Peak hourly rate in the last 2 hours by direction: migrate 0.024 MB/s.',
    );
    expect(screen.getByRole('heading', { name: 'MB/s by direction' })).toBeInTheDocument();
  });

  it('leaves a target far above the lines off the scale and says so', () => {
    render(
      <ThroughputChart
        title="Ingest MB/s"
        hours={hours}
        series={{ ingest: [0.1, 0.2] }}
        what="direction"
        target={578.7}
      />,
    );

    const chart = chartOf(screen.getByRole('img'));
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['ingest']);
    expect(screen.getByRole('img')).toHaveAccessibleName(
      'Peak hourly rate in the last 2 hours by direction: ingest 0.2 MB/s. The daily target ' +
        'needs 578.7 MB/s on average, far above these lines and off the scale.',
    );
  });

  it('shows a message instead of an empty canvas when there are no series', () => {
    render(
      <ThroughputChart title="MB/s by collection" hours={hours} series={{}} what="collection" />,
    );

    expect(screen.queryByRole('img')).not.toBeInTheDocument();
    expect(screen.getByText('No transfers by collection in the last 2 hours.')).toBeInTheDocument();
  });
});

describe('HistogramChart', () => {
  it('bins % full into tenths, 100 % in the last bin', () => {
    expect(percentBins([0, 9.99, 10, 55, 100, 120])).toEqual([2, 1, 0, 0, 0, 1, 0, 0, 0, 2]);
  });

  it('charts the bins', () => {
    render(<HistogramChart title="% full" values={[0.88, 0.88, 95]} />);

    const chart = chartOf(screen.getByRole('img'));
    expect(chart.data.datasets[0]?.data).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(screen.getByRole('img')).toHaveAccessibleName('3 volumes: 2 at 0–10 %, 1 at 90–100 %.');
  });
});
