import { useMutation, useQueryClient } from '@tanstack/react-query';

import { cartQuery } from '../../lib/api/cart/cart';
import { addMatchingToCart } from '../../lib/api/cart/matching';
import { formatCount } from '../../lib/format';

/**
 * Put every granule the search matches in the cart at once. The server adds all or none and
 * says why not (too many granules or bytes for the cart); its words are shown as they come.
 */
export function AddMatchingButton({
  filters,
  total,
}: {
  filters: Record<string, string>;
  /** Granules matching in all; null while unknown. */
  total: number | null;
}) {
  const queryClient = useQueryClient();
  const add = useMutation({
    mutationFn: addMatchingToCart,
    onSuccess: (added) => queryClient.setQueryData(cartQuery().queryKey, added.cart),
  });
  if (total === null || total === 0) return null;
  const key = JSON.stringify(filters);
  // A result or refusal belongs to the search it was for.
  const forThis = add.variables !== undefined && JSON.stringify(add.variables) === key;
  return (
    <div className="add-matching">
      <button
        type="button"
        className="button button--small"
        onClick={() => add.mutate(filters)}
        disabled={add.isPending}
      >
        {add.isPending ? 'Adding…' : `Add all ${formatCount(total)} matching to cart`}
      </button>
      {forThis && add.isSuccess && (
        <span className="small" role="status">
          {add.data.added === 0
            ? `All ${formatCount(add.data.matched)} were in the cart already.`
            : `Added ${formatCount(add.data.added)} of ${formatCount(add.data.matched)}.`}
        </span>
      )}
      {forThis && add.isError && (
        <span className="field-error" role="alert">
          {add.error.message}
        </span>
      )}
    </div>
  );
}
