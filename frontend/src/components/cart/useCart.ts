import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import { meQuery } from '../../lib/api/auth/me';
import { addToCart, cartQuery, clearCart } from '../../lib/api/cart/cart';
import { removeFromCart } from '../../lib/api/cart/cartGranule';
import type { Cart } from '../../lib/api/types';

/** The logged-in user's cart (nothing is asked for anonymous visitors). */
export function useCart() {
  const me = useQuery(meQuery());
  const loggedIn = me.data?.authenticated === true;
  return { loggedIn, cart: useQuery(cartQuery(loggedIn)) };
}

/** Cart changes: every endpoint answers with the new cart, which replaces the cached one. */
export function useCartChange<T>(change: (arg: T) => Promise<Cart>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: change,
    onSuccess: (cart) => queryClient.setQueryData(cartQuery().queryKey, cart),
  });
}

export const cartChanges = {
  add: (id: number) => addToCart([id]),
  remove: removeFromCart,
  clear: () => clearCart(),
};
