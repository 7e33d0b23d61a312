/**
 * What a timeline bucket stands for in the search's terms: its label, and the UTC days
 * (yyyy-mm-dd, both included) it covers, since the search's time range is in whole days.
 * Plain functions, so the calendar arithmetic can be tested on its own.
 */
import type { TimelineBucketSize } from '../../lib/api/types';

const day = (date: Date) => date.toISOString().slice(0, 10);

/** The first instant after the bucket that starts at `start`. */
function bucketEnd(start: Date, size: TimelineBucketSize): Date {
  const end = new Date(start);
  if (size === 'hour') end.setUTCHours(end.getUTCHours() + 1);
  else if (size === 'day') end.setUTCDate(end.getUTCDate() + 1);
  else if (size === 'month') end.setUTCMonth(end.getUTCMonth() + 1);
  else end.setUTCFullYear(end.getUTCFullYear() + 1);
  return end;
}

/** The days from the start of `first` to the end of `last` (buckets' ISO start times). */
export function bucketDays(
  first: string,
  last: string,
  size: TimelineBucketSize,
): { start: string; end: string } {
  const [from, to] = [new Date(first), new Date(last)].sort((a, b) => a.getTime() - b.getTime());
  // The last day that the later bucket touches: one millisecond before it ends.
  const end = new Date(bucketEnd(to!, size).getTime() - 1);
  return { start: day(from!), end: day(end) };
}

/** A short label for a bucket, as precise as its size. */
export function bucketLabel(start: string, size: TimelineBucketSize): string {
  const iso = new Date(start).toISOString();
  if (size === 'year') return iso.slice(0, 4);
  if (size === 'month') return iso.slice(0, 7);
  if (size === 'day') return iso.slice(0, 10);
  return `${iso.slice(0, 10)} ${iso.slice(11, 13)}:00`;
}
