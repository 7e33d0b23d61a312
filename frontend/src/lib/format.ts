/** Number formats the dashboards share: decimal units, as the archive counts bytes. */
import type { BBox } from './api/types';

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
const numberFormat = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
const smallFormat = new Intl.NumberFormat('en', { maximumSignificantDigits: 2 });
const countFormat = new Intl.NumberFormat('en');

/** The decimal unit that suits a number of bytes: { name: 'MB', size: 1e6 } for 40.6e6. */
export function byteUnit(bytes: number): { name: string; size: number } {
  let unit = 0;
  let size = 1;
  while (Math.abs(bytes) >= size * 1000 && unit < UNITS.length - 1) {
    size *= 1000;
    unit += 1;
  }
  return { name: UNITS[unit] ?? 'B', size };
}

function decimals(value: number, unit: { size: number }): number {
  return value >= 100 || unit.size === 1 ? 0 : value >= 10 ? 1 : 2;
}

/** Three significant figures in the unit that suits them; a figure whose rounding carries
 * over takes the next unit or the next width, so 999.8 GB reads "1.00 TB", never "1000 GB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const sign = bytes < 0 ? '−' : '';
  const unit = byteUnit(bytes);
  const value = Math.abs(bytes) / unit.size;
  const rounded = Number(value.toFixed(decimals(value, unit)));
  if (rounded >= 1000 && unit.name !== UNITS[UNITS.length - 1]) {
    return `${sign}${formatBytes(rounded * unit.size)}`;
  }
  return `${sign}${rounded.toFixed(decimals(rounded, unit))} ${unit.name}`;
}

/** Bytes per second in the unit that suits them: "12.5 MB/s", "3.64 KB/s". */
export function formatRate(bytesPerSecond: number | null | undefined): string {
  if (bytesPerSecond === null || bytesPerSecond === undefined) return '—';
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** Two decimals, or two significant digits below 1, so a small figure never shows as 0. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return Math.abs(value) < 1 ? smallFormat.format(value) : numberFormat.format(value);
}

export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return countFormat.format(value);
}

export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${formatNumber(value)} %`;
}

/** An age in seconds as "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function formatAge(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

const timeFormat = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${timeFormat.format(date)} UTC`;
}

/** "2026-11-01 00:05 UTC": granule times, where the year and the minute both matter. */
export function formatUtc(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A granule's time range, the second date left out when it is the same day. */
export function formatUtcRange(start: string, end: string): string {
  const from = formatUtc(start);
  const to = formatUtc(end);
  return from.slice(0, 10) === to.slice(0, 10)
    ? `${from.slice(0, 16)}–${to.slice(11)}`
    : `${from} – ${to}`;
}

/** "about 3 min" for an estimate in seconds; under a minute counts as one. */
export function formatEta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return minutes < 90 ? `about ${minutes} min` : `about ${formatAge(seconds)}`;
}

/** A box as the search's address and the granule page write it: w,s,e,n to 0.001°. */
export function formatBBox(box: BBox): string {
  return box.map((n) => String(Math.round(n * 1000) / 1000)).join(',');
}
