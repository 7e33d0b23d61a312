import { render, screen, within } from '@testing-library/react';
import { expect, it } from 'vitest';

import { FaultList } from './FaultList';

it('lists each fault with its state and the reason recorded', () => {
  render(
    <FaultList
      title="Drives offline or failing"
      label="Drive faults"
      faults={[
        { name: 'LTO9-A1', state: 'offline', reason: 'cleaning cartridge stuck' },
        { name: 'LTO9-B2', state: 'idle', reason: 'write error at block 7' },
      ]}
    />,
  );
  expect(screen.getByRole('heading', { name: 'Drives offline or failing' })).toBeInTheDocument();
  const items = within(screen.getByRole('list', { name: 'Drive faults' })).getAllByRole('listitem');
  expect(items.map((item) => item.textContent)).toEqual([
    'LTO9-A1 offline cleaning cartridge stuck',
    'LTO9-B2 idle write error at block 7',
  ]);
});

it('shows what it is told when nothing is at fault, else nothing', () => {
  const { container, rerender } = render(
    <FaultList title="Volumes out of service" label="Volume faults" faults={[]} />,
  );
  expect(container).toBeEmptyDOMElement();
  rerender(
    <FaultList title="t" label="l" faults={[]} empty={<p>No drive is offline or failing.</p>} />,
  );
  expect(screen.getByText('No drive is offline or failing.')).toBeInTheDocument();
  expect(screen.queryByRole('list')).not.toBeInTheDocument();
});
