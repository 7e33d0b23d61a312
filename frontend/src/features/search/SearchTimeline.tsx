import type { ChartData, ChartOptions } from 'chart.js';
import { useRef, useState, type PointerEvent } from 'react';
import { Bar } from 'react-chartjs-2';

import { ChartFigure } from '../../components/ChartFigure';
import { Chart, seriesColour } from '../../lib/chart';
import type { Timeline } from '../../lib/api/types';
import { formatCount } from '../../lib/format';
import { bucketDays, bucketLabel } from './timelineBuckets';

const SELECTED = '#D55E00';

/**
 * How many granules of the search start when, as bars. Clicking a bar narrows the search's
 * dates to its bucket; dragging across bars narrows them to the span.
 */
export function SearchTimeline({
  timeline,
  onNarrow,
}: {
  /** The search's timeline, answered with its results (undefined: not yet, or none). */
  timeline: Timeline | undefined;
  onNarrow: (start: string, end: string) => void;
}) {
  const chart = useRef<Chart<'bar', number[], string> | null>(null);
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);

  // A search that failed says so once, in the results.
  if (!timeline || timeline.buckets.length === 0) return null;
  const { buckets, bucket: size, total } = timeline;

  const labels = buckets.map((b) => bucketLabel(b.start, size));
  const counts = buckets.map((b) => b.count);
  const [low, high] = drag
    ? [Math.min(drag.from, drag.to), Math.max(drag.from, drag.to)]
    : [-1, -1];
  const data: ChartData<'bar', number[], string> = {
    labels,
    datasets: [
      {
        label: 'Granules',
        data: counts,
        backgroundColor: counts.map((_, i) => (i >= low && i <= high ? SELECTED : seriesColour(0))),
        categoryPercentage: 1,
        barPercentage: 0.9,
        minBarLength: 2,
      },
    ],
  };
  const options: ChartOptions<'bar'> = {
    responsive: true,
    // Clicks and drags are read from pointer events below; hovering only shows the tooltip.
    interaction: { mode: 'index', intersect: false },
    scales: {
      y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Granules' } },
      x: { ticks: { maxRotation: 0, autoSkipPadding: 8 } },
    },
    plugins: { legend: { display: false } },
  };

  /** The bucket under the pointer, or null outside the bars. */
  function bucketAt(event: PointerEvent<HTMLDivElement>): number | null {
    const instance = chart.current;
    if (!instance) return null;
    const hits = instance.getElementsAtEventForMode(
      event.nativeEvent,
      'index',
      { intersect: false },
      false,
    );
    return hits[0]?.index ?? null;
  }

  function onPointerDown(event: PointerEvent<HTMLDivElement>) {
    const index = bucketAt(event);
    if (index === null) return;
    event.currentTarget.setPointerCapture?.(event.pointerId);
    setDrag({ from: index, to: index });
  }

  function onPointerMove(event: PointerEvent<HTMLDivElement>) {
    if (!drag) return;
    const index = bucketAt(event);
    if (index !== null && index !== drag.to) setDrag({ ...drag, to: index });
  }

  function onPointerUp(event: PointerEvent<HTMLDivElement>) {
    if (!drag) return;
    const index = bucketAt(event) ?? drag.to;
    setDrag(null);
    const first = buckets[Math.min(drag.from, index)];
    const last = buckets[Math.max(drag.from, index)];
    if (!first || !last) return;
    const days = bucketDays(first.start, last.start, size);
    onNarrow(days.start, days.end);
  }

  const first = labels[0] ?? '';
  const last = labels.at(-1) ?? '';
  const summary =
    `${formatCount(total)} ${total === 1 ? 'granule' : 'granules'} from ${first} to ${last}, ` +
    `counted per ${size}. Click a bar to search its ${size}, or drag across bars for a span.`;
  return (
    <ChartFigure
      title="When the granules start"
      summary={summary}
      headingLevel={2}
      table={{
        caption: `Granules per ${size}`,
        columns: [size[0]!.toUpperCase() + size.slice(1), 'Granules'],
        rows: labels.map((label, i) => [label, counts[i] ?? 0]),
      }}
    >
      <div
        className="search-timeline"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={() => setDrag(null)}
      >
        <Bar ref={chart} data={data} options={options} role="img" aria-label={summary} />
      </div>
    </ChartFigure>
  );
}
