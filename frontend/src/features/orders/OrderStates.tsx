import type { ItemState, OrderState } from '../../lib/api/types';
import { StateBadge, type Tone } from '../../components/StateBadge';

const ORDER: Record<OrderState, [string, Tone]> = {
  submitted: ['Submitted', 'wait'],
  staging: ['Waiting for tape', 'wait'],
  ready: ['Ready', 'ok'],
  partially_ready: ['Ready in part', 'bad'],
  completed: ['Completed', 'ok'],
  failed: ['Failed', 'bad'],
  cancelled: ['Cancelled', 'off'],
  expired: ['Expired', 'off'],
};

const ITEM: Record<ItemState, [string, Tone]> = {
  waiting: ['Waiting', 'wait'],
  ready: ['Ready', 'ok'],
  failed: ['Failed', 'bad'],
  expired: ['Expired', 'off'],
  cancelled: ['Cancelled', 'off'],
};

export function OrderStateBadge({ state }: { state: OrderState }) {
  const [label, tone] = ORDER[state] ?? [state, 'off'];
  return <StateBadge tone={tone}>{label}</StateBadge>;
}

export function ItemStateBadge({ state }: { state: ItemState }) {
  const [label, tone] = ITEM[state] ?? [state, 'off'];
  return <StateBadge tone={tone}>{label}</StateBadge>;
}
