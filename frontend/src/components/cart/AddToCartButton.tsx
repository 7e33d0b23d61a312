import { Link } from 'react-router';

import { cartChanges, useCart, useCartChange } from './useCart';
import '../portal.css';

/**
 * Add one granule to the cart, or say it is there already. A refusal (a limit, a restricted
 * collection) is shown in the API's words next to the button.
 */
export function AddToCartButton({ granule, label }: { granule: number; label: string }) {
  const { loggedIn, cart } = useCart();
  const add = useCartChange(cartChanges.add);
  if (!loggedIn) return null;
  const inCart = cart.data?.granules.some((item) => item.granule === granule) ?? false;
  if (inCart) {
    return (
      <span className="cart-state">
        <span>
          <span aria-hidden="true">✓ </span>
          <Link to="/cart" aria-label={`${label} is in the cart: open the cart`}>
            In cart
          </Link>
        </span>
      </span>
    );
  }
  return (
    <span className="cart-state">
      <button
        type="button"
        className="button button--small"
        onClick={() => add.mutate(granule)}
        disabled={add.isPending || cart.isPending}
        aria-label={`Add ${label} to the cart`}
      >
        {add.isPending ? 'Adding…' : 'Add to cart'}
      </button>
      {add.isError && (
        <span className="field-error" role="alert">
          {add.error.message}
        </span>
      )}
    </span>
  );
}
