/** The site settings of an owner who has no site.config.ts and gives none to `siteForms()`: neutral ones. */
import { defineSite } from '../../lib/site/define-site.ts';

export default defineSite({ name: 'Forms' });
