import { describe, expect, test } from 'vitest';
import forms from '#forms-config';
import { formRoutes } from '../../src/integration/integration.ts';
import { defineForms } from '../../src/lib/forms/settings.ts';
import { ROUTES } from '../../src/lib/pipeline/routes.ts';

// The integration injects one on-demand route per address of the API, from a list of its own
// (it is read before Vite can load the handlers): a route added to ROUTES and not to that list
// would be a 404 page in an owner's server, never reaching the middleware.
describe('the routes the integration injects', () => {
  test('are exactly the addresses of ROUTES but the admin’s actions (which /admin/[...rest] takes)', () => {
    const api = ROUTES.filter((route) => route.kind !== 'admin').map((route) => route.path);
    expect([...formRoutes(forms)].sort()).toEqual([...api].sort());
  });

  test('an owner’s form gets its own address', () => {
    const booking = defineForms({
      forms: [
        {
          name: 'booking',
          title: 'Book a table',
          submitLabel: 'Book',
          busyLabel: 'Booking...',
          thanks: 'Booked.',
          fields: [{ name: 'name', type: 'text', label: 'Name' }],
        },
      ],
    });
    expect(formRoutes(booking).filter((path) => path.startsWith('/api/forms/'))).toEqual(['/api/forms/booking']);
  });
});
