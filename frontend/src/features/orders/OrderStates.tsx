import type { ItemState, OrderState } from '../../lib/api/types';
import { StateBadge, type Tone } from '../../components/StateBadge';

/** How each state looks; its words come from the API (`state_label`), one vocabulary everywhere. */
const ORDER_TONE: Record<OrderState, Tone> = {
  submitted: 'wait',
  staging: 'wait',
  ready: 'ok',
  partially_ready: 'bad',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'off',
  expired: 'off',
};

const ITEM_TONE: Record<ItemState, Tone> = {
  waiting: 'wait',
  ready: 'ok',
  failed: 'bad',
  expired: 'off',
  cancelled: 'off',
  empty: 'off',
};

export function OrderStateBadge({ state, label }: { state: OrderState; label: string }) {
  return <StateBadge tone={ORDER_TONE[state] ?? 'off'}>{label}</StateBadge>;
}

export function ItemStateBadge({ state, label }: { state: ItemState; label: string }) {
  return <StateBadge tone={ITEM_TONE[state] ?? 'off'}>{label}</StateBadge>;
}
