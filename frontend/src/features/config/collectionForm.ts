import type {
  Bucket,
  CollectionAccess,
  CollectionConfig,
  CollectionConfigChange,
  Medium,
  VolumeGroup,
} from '../../lib/api/types';
import { MEDIUM_NAMES } from '../../lib/media';
import { listOf } from '../../lib/api/configErrors';

export const UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;
export type Unit = keyof typeof UNITS;
export type DuplicatePolicy = NonNullable<CollectionConfig['duplicate_policy']>;

const TEXT_FIELDS = [
  'short_name',
  'version',
  'title',
  'description',
  'processing_level',
  'platform',
  'instrument',
  'doi',
  'citation',
] as const;
const BOX = ['extent_west', 'extent_south', 'extent_east', 'extent_north'] as const;

export type FormState = Record<(typeof TEXT_FIELDS)[number] | (typeof BOX)[number], string> & {
  access: CollectionAccess;
  duplicate_policy: DuplicatePolicy;
  file_patterns: string;
  variables: string;
  extent_start: string;
  extent_end: string;
  cadence: string;
  cadence_unit: Unit;
  latency: string;
  latency_unit: Unit;
  approved_users: string;
  copies: string[];
  cache_residency_days: string;
  reason: string;
};

export function emptyForm(): FormState {
  return {
    short_name: '',
    version: '',
    title: '',
    description: '',
    processing_level: '',
    platform: '',
    instrument: '',
    doi: '',
    citation: '',
    extent_west: '',
    extent_south: '',
    extent_east: '',
    extent_north: '',
    access: 'public',
    duplicate_policy: 'error',
    file_patterns: '',
    variables: '',
    extent_start: '',
    extent_end: '',
    cadence: '',
    cadence_unit: 'minutes',
    latency: '',
    latency_unit: 'hours',
    approved_users: '',
    copies: [''],
    cache_residency_days: '0',
    reason: '',
  };
}

/** Seconds as a value in the largest unit that divides them. */
export function splitSeconds(seconds: number | null | undefined, fallback: Unit): [string, Unit] {
  if (seconds == null) return ['', fallback];
  const units = (Object.keys(UNITS) as Unit[]).reverse();
  const unit = units.find((name) => seconds % UNITS[name] === 0) ?? 'seconds';
  return [String(seconds / UNITS[unit]), unit];
}

function localTime(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 16) : ''; // the API answers in UTC: 2024-01-01T00:00:00Z
}

export function formFrom(c: CollectionConfig): FormState {
  const [cadence, cadenceUnit] = splitSeconds(c.cadence_seconds, 'minutes');
  const [latency, latencyUnit] = splitSeconds(c.latency_target_seconds, 'hours');
  const text = Object.fromEntries(TEXT_FIELDS.map((f) => [f, c[f] ?? '']));
  const box = Object.fromEntries(BOX.map((f) => [f, c[f] == null ? '' : String(c[f])]));
  return {
    ...emptyForm(),
    ...text,
    ...box,
    access: c.access ?? 'public',
    duplicate_policy: c.duplicate_policy ?? 'error',
    file_patterns: (c.file_patterns ?? [])
      .map((p) => (typeof p === 'string' ? p : JSON.stringify(p)))
      .join('\n'),
    variables: (c.variables ?? []).map((v) => `${v.name} | ${v.units} | ${v.long_name}`).join('\n'),
    extent_start: localTime(c.extent_start),
    extent_end: localTime(c.extent_end),
    cadence,
    cadence_unit: cadenceUnit,
    latency,
    latency_unit: latencyUnit,
    approved_users: (c.approved_users ?? []).join(', '),
    copies: c.policy?.copies.length ? [...c.policy.copies] : [''],
    cache_residency_days: String(c.policy?.cache_residency_days ?? 0),
  } as FormState;
}

/** A number typed, null for nothing, or the text as typed so the API names what is wrong. */
function numberOf(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const value = Number(trimmed);
  return (Number.isFinite(value) ? value : trimmed) as number;
}

function secondsOf(text: string, unit: Unit): number | null {
  const value = numberOf(text);
  return typeof value === 'number' ? Math.round(value * UNITS[unit]) : value;
}

function patternOf(line: string): unknown {
  if (!line.startsWith('{')) return line;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
}

function variableOf(line: string) {
  const [name = '', units = '', longName = ''] = line.split('|').map((part) => part.trim());
  return { name, units, long_name: longName };
}

export function bodyOf(form: FormState): CollectionConfigChange {
  const lines = (text: string) =>
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
  const text = Object.fromEntries(TEXT_FIELDS.map((f) => [f, form[f].trim()]));
  const box = Object.fromEntries(BOX.map((f) => [f, numberOf(form[f])]));
  return {
    ...(text as Pick<CollectionConfigChange, (typeof TEXT_FIELDS)[number]>),
    ...box,
    access: form.access,
    duplicate_policy: form.duplicate_policy,
    file_patterns: lines(form.file_patterns).map(patternOf),
    variables: lines(form.variables).map(variableOf),
    extent_start: form.extent_start ? `${form.extent_start}:00Z` : null,
    extent_end: form.extent_end ? `${form.extent_end}:00Z` : null,
    cadence_seconds: secondsOf(form.cadence, form.cadence_unit),
    latency_target_seconds: secondsOf(form.latency, form.latency_unit),
    approved_users: listOf(form.approved_users),
    policy: {
      copies: form.copies,
      cache_residency_days: numberOf(form.cache_residency_days) ?? 0,
    },
    reason: form.reason.trim(),
  };
}

/** "every 5 minutes" from seconds, for the lists. */
export function describeSeconds(seconds: number | null | undefined): string {
  if (seconds == null) return '—';
  const [value, unit] = splitSeconds(seconds, 'seconds');
  return `${value} ${value === '1' ? unit.slice(0, -1) : unit}`;
}

/** A place a policy may send a copy: a volume group (tape) or a bucket (object store). */
export interface CopyTarget {
  name: string;
  medium: Medium;
  label: string;
}

/** The copy targets a policy may name, tape first, each labelled by its medium:
 * "tape: primary (silo1)", "object store: archive-s3". */
export function copyTargets(groups: VolumeGroup[], buckets: Bucket[]): CopyTarget[] {
  const tape = groups.map((g) => {
    const about = [g.role !== g.name ? g.role : '', g.silo ?? ''].filter(Boolean).join(', ');
    return {
      name: g.name,
      medium: 'tape' as const,
      label: `${MEDIUM_NAMES.tape}: ${g.name}${about ? ` (${about})` : ''}`,
    };
  });
  const objects = buckets.map((b) => ({
    name: b.name,
    medium: 'object' as const,
    label: `${MEDIUM_NAMES.object}: ${b.name}`,
  }));
  return [...tape, ...objects];
}
