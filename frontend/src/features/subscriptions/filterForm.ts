/**
 * The subscription form's state and how it maps to the API's body, kept apart from React so
 * the mapping can be read (and tested) on its own. Dates are UTC calendar days: the API takes a
 * bare date as the start (or, for `end`, the end) of that day.
 */
import {
  NO_SUBSET,
  subsetDraft,
  subsetOptions,
  type SubsetDraft,
} from '../../components/subset/SubsetChoices';
import type { SearchDraft } from '../../lib/searchSubscription';
import { describeShape, type Geometry } from '../../lib/shapeParam';
import type {
  BBox,
  Condition,
  ConditionOp,
  ConditionValue,
  DeliveryMode,
  Subscription,
  SubscriptionBody,
  SubscriptionFilter,
  SubsetOptions,
} from '../../lib/api/types';

export interface ConditionRow {
  key: number;
  name: string;
  op: ConditionOp;
  value: string;
}

export type DayNight = '' | 'Day' | 'Night';

export interface FormState {
  name: string;
  collections: string[];
  west: string;
  south: string;
  east: string;
  north: string;
  /** A drawn or uploaded shape; it replaces the box (whose sides are then empty). */
  shape: Geometry | null;
  start: string;
  end: string;
  dayNight: DayNight;
  cloudBelow: string;
  others: ConditionRow[];
  newVersions: boolean;
  mode: DeliveryMode;
  destination: string;
  applySince: boolean;
  since: string;
  /** Each delivered data file cut to these (not for a subscription that only notifies). */
  subset: SubsetDraft;
}

export const OP_SYMBOLS: Record<ConditionOp, string> = {
  eq: '=',
  ne: '≠',
  lt: '<',
  lte: '≤',
  gt: '>',
  gte: '≥',
  in: 'is one of',
};

const DAY_NIGHT = 'day_night';
const CLOUD_COVER = 'cloud_cover';

let nextKey = 1;
export function newConditionRow(): ConditionRow {
  nextKey += 1;
  return { key: nextKey, name: '', op: 'eq', value: '' };
}

/** yyyy-mm-dd of a UTC instant. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function emptyForm(today = new Date()): FormState {
  return {
    name: '',
    collections: [],
    west: '',
    south: '',
    east: '',
    north: '',
    shape: null,
    start: '',
    end: '',
    dayNight: '',
    cloudBelow: '',
    others: [],
    newVersions: false,
    mode: 'notify',
    destination: '',
    applySince: false,
    since: utcDay(new Date(today.getTime() - 30 * 86_400_000)),
    subset: NO_SUBSET,
  };
}

function valueText(value: ConditionValue): string {
  return Array.isArray(value) ? value.join(', ') : String(value);
}

export function formFromSubscription(subscription: Subscription, today = new Date()): FormState {
  const form = emptyForm(today);
  const others: ConditionRow[] = [];
  for (const condition of subscription.conditions) {
    if (
      condition.name === DAY_NIGHT &&
      condition.op === 'eq' &&
      !form.dayNight &&
      (condition.value === 'Day' || condition.value === 'Night')
    ) {
      form.dayNight = condition.value;
    } else if (condition.name === CLOUD_COVER && condition.op === 'lt' && !form.cloudBelow) {
      form.cloudBelow = valueText(condition.value);
    } else {
      others.push({
        ...newConditionRow(),
        name: condition.name,
        op: condition.op,
        value: valueText(condition.value),
      });
    }
  }
  const shape = (subscription.intersects as Geometry | null | undefined) ?? null;
  // With a shape the box is only the shape's extent: the shape is what is edited.
  const [west, south, east, north] = shape ? [] : (subscription.bbox ?? []);
  return {
    ...form,
    name: subscription.name,
    collections: [...subscription.collections],
    west: west === undefined ? '' : String(west),
    south: south === undefined ? '' : String(south),
    east: east === undefined ? '' : String(east),
    north: north === undefined ? '' : String(north),
    shape,
    start: subscription.start ? subscription.start.slice(0, 10) : '',
    end: subscription.end ? subscription.end.slice(0, 10) : '',
    others,
    newVersions: subscription.new_versions,
    mode: subscription.mode,
    destination: subscription.destination === null ? '' : String(subscription.destination),
    subset: subsetDraft(subscription.subset as SubsetOptions | null),
  };
}

/** A new subscription filled in from a search; `collections` are the ones it resolved to. */
export function formFromSearch(
  draft: SearchDraft,
  collections: string[],
  today = new Date(),
): FormState {
  const side = (index: number) => (draft.bbox && !draft.shape ? String(draft.bbox[index]) : '');
  return {
    ...emptyForm(today),
    collections,
    west: side(0),
    south: side(1),
    east: side(2),
    north: side(3),
    shape: draft.shape,
    start: draft.start,
    end: draft.end,
    dayNight: draft.dayNight,
    cloudBelow: draft.cloudBelow,
  };
}

/** The form's box when all four sides are numbers (to draw it), else null. */
export function boxOf(form: FormState): BBox | null {
  const sides = [form.west, form.south, form.east, form.north];
  if (sides.some((side) => side.trim() === '')) return null;
  const numbers = sides.map(Number);
  return numbers.every(Number.isFinite) ? (numbers as BBox) : null;
}

/** A number when the text is one, else the text as typed (the API then says what is wrong). */
function numberOrText(text: string): string | number {
  const trimmed = text.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

function conditionValue(row: ConditionRow): ConditionValue {
  if (row.op === 'in')
    return row.value
      .split(',')
      .map((part) => numberOrText(part))
      .filter((v) => v !== '');
  return numberOrText(row.value);
}

export function conditionsOf(form: FormState): Condition[] {
  const conditions: Condition[] = [];
  if (form.dayNight) conditions.push({ name: DAY_NIGHT, op: 'eq', value: form.dayNight });
  if (form.cloudBelow.trim())
    conditions.push({ name: CLOUD_COVER, op: 'lt', value: numberOrText(form.cloudBelow) });
  for (const row of form.others) {
    if (!row.name.trim() && !row.value.trim()) continue;
    conditions.push({ name: row.name.trim(), op: row.op, value: conditionValue(row) });
  }
  return conditions;
}

/** The day as typed, or the original instant when the day is unchanged (keeps its time). */
function instantOf(day: string, original: string | null | undefined): string | null {
  if (!day) return null;
  return original && original.slice(0, 10) === day ? original : day;
}

export function filterOf(form: FormState, original?: Subscription | null): SubscriptionFilter {
  const box = [form.west, form.south, form.east, form.north];
  return {
    collections: form.collections,
    // Sent only with a shape: a box (or none) sent alone replaces a stored shape.
    ...(form.shape ? { intersects: form.shape as SubscriptionFilter['intersects'] } : {}),
    bbox:
      form.shape || box.every((v) => v.trim() === '')
        ? null
        : [
            numberOrText(form.west),
            numberOrText(form.south),
            numberOrText(form.east),
            numberOrText(form.north),
          ],
    start: instantOf(form.start, original?.start),
    end: instantOf(form.end, original?.end),
    conditions: conditionsOf(form),
    new_versions: form.newVersions,
  };
}

export function bodyOf(form: FormState, original?: Subscription | null): SubscriptionBody {
  const subset = form.mode === 'notify' ? null : subsetOptions(form.subset);
  return {
    ...filterOf(form, original),
    name: form.name.trim(),
    mode: form.mode,
    destination: form.mode === 'push' && form.destination ? Number(form.destination) : null,
    // Sent when there is one, or to take away the one the subscription had.
    ...(subset || original?.subset ? { subset } : {}),
  };
}

const dayFormat = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
});

function formatDay(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dayFormat.format(date);
}

function degrees(value: number, positive: string, negative: string): string {
  return `${Math.abs(value)}° ${value < 0 ? negative : positive}`;
}

/** Plain-language lines for a subscription's filter. */
export function describe(
  subscription: Pick<Subscription, 'bbox' | 'start' | 'end' | 'conditions'> & {
    intersects?: Subscription['intersects'];
  },
) {
  const box = subscription.bbox;
  const within = subscription.intersects
    ? `Within ${describeShape(subscription.intersects as Geometry)}, inside `
    : '';
  const area = box
    ? `${within}${degrees(box[0], 'E', 'W')} to ${degrees(box[2], 'E', 'W')}, ${degrees(box[1], 'N', 'S')} to ${degrees(box[3], 'N', 'S')}${
        box[0] > box[2] ? ' (across the antimeridian)' : ''
      }`
    : 'Anywhere';
  let window = 'Any time';
  if (subscription.start && subscription.end)
    window = `${formatDay(subscription.start)} to ${formatDay(subscription.end)}`;
  else if (subscription.start) window = `From ${formatDay(subscription.start)}`;
  else if (subscription.end) window = `Until ${formatDay(subscription.end)}`;
  const conditions = subscription.conditions.length
    ? subscription.conditions
        .map((c) => `${c.name} ${OP_SYMBOLS[c.op]} ${valueText(c.value)}`)
        .join('; ')
    : 'None';
  return { area, window, conditions };
}
