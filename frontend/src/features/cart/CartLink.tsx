import { NavLink } from 'react-router';

import { useCart } from '../../components/cart/useCart';

/** The cart in the main navigation, with how many granules it holds. */
export function CartLink() {
  const { cart } = useCart();
  const count = cart.data?.count ?? 0;
  return (
    <NavLink
      to="/cart"
      aria-label={count ? `Cart, ${count} ${count === 1 ? 'granule' : 'granules'}` : 'Cart'}
    >
      Cart{count > 0 && <span className="nav-count">{count}</span>}
    </NavLink>
  );
}
